//! Answers remembered by their request's content key (`proto::request_key`).
//!
//! Crossplane calls the function with the same request on every reconcile of an unchanged
//! claim, a minute apart by default, and on every one it makes two calls (the first, then the
//! one with what the first asked for). The answer to a request is a function of its content
//! alone, so the server answers a request it has answered before with the same bytes, from
//! here, after one walk over the request that builds nothing; only a request with new content
//! is decoded and rendered.
//!
//! Bounded by bytes (`--answer-memo-size`): each answer counts its length and
//! [`ENTRY_OVERHEAD`]. When a new answer does not fit, the oldest go first (first in, first
//! out; a hit does not renew an answer, so the memo costs one lock and one lookup a call). An
//! answer larger than an eighth of the bound is not kept, so that one large claim cannot push
//! out every other.
//!
//! A hit trusts the key: two requests with one key are taken to decode to the same message
//! (`proto::request_key` says how far that holds). In debug builds and tests each answer also
//! keeps a second digest of its request, made another way ([`Witness`]), and every hit
//! compares it with the request in hand: a wrong hit panics there rather than answer one
//! request with another's answer.

use super::metrics::Rendered;
use crate::proto::v1::RunFunctionRequest;
use prost::bytes::Bytes;
use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

/// What an answer costs beyond its bytes: its key twice, its place in the map and the queue,
/// the metrics it keeps.
pub(super) const ENTRY_OVERHEAD: usize = 128;

/// One answer remembered: its bytes, as sent, what the metrics count for it, and the second
/// digest of its request.
#[derive(Clone, Debug)]
pub(super) struct Remembered {
    pub(super) answer: Bytes,
    pub(super) rendered: Rendered,
    pub(super) witness: Witness,
}

/// A second digest of a request, independent of its content key, in debug builds and tests:
/// SHA-256 of the decoded request in the protobuf JSON mapping, whose maps are written sorted, so
/// that Go's order of map entries does not count here either; `None` for bytes that do not
/// decode. Release builds keep and compute nothing: the server's hot path stays as measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Witness {
    #[cfg(debug_assertions)]
    digest: Option<[u8; 32]>,
}

impl Witness {
    /// The digest of `request`, a request decoded (`None`: bytes that do not decode).
    #[cfg_attr(not(debug_assertions), allow(unused_variables))]
    pub(super) fn of(request: Option<&RunFunctionRequest>) -> Witness {
        Witness {
            #[cfg(debug_assertions)]
            digest: request.map(|request| {
                use sha2::{Digest, Sha256};
                let json = crate::proto::json::request_to_json(request);
                Sha256::digest(json.to_string()).into()
            }),
        }
    }

    /// The digest of a request given as its bytes.
    pub(super) fn of_bytes(request: &Bytes) -> Witness {
        if cfg!(debug_assertions) {
            let decoded = <RunFunctionRequest as prost::Message>::decode(request.clone());
            Witness::of(decoded.as_ref().ok())
        } else {
            Witness::of(None)
        }
    }
}

impl Remembered {
    fn cost(&self) -> usize {
        self.answer.len() + ENTRY_OVERHEAD
    }
}

/// The answers, by key, up to a number of bytes.
pub(super) struct Memo {
    limit: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    answers: HashMap<u128, Remembered>,
    /// The keys in the order their answers came, oldest first.
    order: VecDeque<u128>,
    /// The cost of every answer held.
    bytes: usize,
}

impl Memo {
    /// A memo of at most `limit` bytes; `0` remembers nothing.
    pub(super) fn new(limit: usize) -> Memo {
        Memo {
            limit,
            state: Mutex::new(State::default()),
        }
    }

    /// Whether the memo keeps anything: when it does not, the caller need not compute a key.
    pub(super) fn is_on(&self) -> bool {
        self.limit > 0
    }

    /// The answer remembered for `key`. In debug builds and tests, its request's [`Witness`]
    /// must be `witness()`, the request in hand's: a hit for another request panics.
    pub(super) fn get(&self, key: u128, witness: impl FnOnce() -> Witness) -> Option<Remembered> {
        let remembered = self.state().answers.get(&key).cloned()?;
        if cfg!(debug_assertions) {
            assert!(
                remembered.witness == witness(),
                "the memo holds another request's answer under this request's content key"
            );
        }
        Some(remembered)
    }

    /// Remembers `answer` for `key`, pushing out the oldest answers until it fits; an answer
    /// over an eighth of the bound is not kept.
    pub(super) fn remember(&self, key: u128, answer: Remembered) {
        let cost = answer.cost();
        if cost > self.limit / 8 {
            return;
        }
        let mut state = self.state();
        if state.answers.contains_key(&key) {
            return;
        }
        while state.bytes + cost > self.limit {
            let Some(oldest) = state.order.pop_front() else {
                break;
            };
            if let Some(gone) = state.answers.remove(&oldest) {
                state.bytes -= gone.cost();
            }
        }
        state.bytes += cost;
        state.order.push_back(key);
        state.answers.insert(key, answer);
    }

    /// The bytes the memo holds, as it counts them.
    #[cfg(test)]
    pub(super) fn bytes(&self) -> usize {
        self.state().bytes
    }

    /// A panic while the lock was held (none is possible in the code above) leaves the state
    /// whole: each change is made before the next begins.
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(len: usize) -> Remembered {
        answer_to(len, &RunFunctionRequest::default())
    }

    fn answer_to(len: usize, request: &RunFunctionRequest) -> Remembered {
        let response = crate::proto::v1::RunFunctionResponse::default();
        let findings = crate::core::problems::Findings::default();
        Remembered {
            answer: Bytes::from(vec![7u8; len]),
            rendered: Rendered::of(&findings, &response),
            witness: Witness::of(Some(request)),
        }
    }

    /// A memo's lookup for the request every [`answer`] is to.
    fn get(memo: &Memo, key: u128) -> Option<Remembered> {
        memo.get(key, || Witness::of(Some(&RunFunctionRequest::default())))
    }

    fn tagged(tag: &str) -> RunFunctionRequest {
        RunFunctionRequest {
            meta: Some(crate::proto::v1::RequestMeta {
                tag: tag.to_owned(),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn an_answer_is_found_by_its_key_only() {
        let memo = Memo::new(1 << 20);
        memo.remember(1, answer(10));
        assert_eq!(get(&memo, 1).unwrap().answer.len(), 10);
        assert!(get(&memo, 2).is_none());
    }

    #[test]
    fn a_hit_for_the_request_remembered_passes_its_check() {
        let memo = Memo::new(1 << 20);
        memo.remember(1, answer_to(10, &tagged("alpha")));
        let bytes = Bytes::from(prost::Message::encode_to_vec(&tagged("alpha")));
        assert!(memo.get(1, || Witness::of_bytes(&bytes)).is_some());
    }

    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "another request's answer")]
    fn a_hit_for_another_request_fails_loudly() {
        let memo = Memo::new(1 << 20);
        memo.remember(1, answer_to(10, &tagged("alpha")));
        let bytes = Bytes::from(prost::Message::encode_to_vec(&tagged("bravo")));
        memo.get(1, || Witness::of_bytes(&bytes));
    }

    /// Two resources written one before the other, as Go may write a map: one request (prost
    /// merges the two `observed` fields).
    #[cfg(debug_assertions)]
    fn observed(first: &str, second: &str) -> Bytes {
        let one = |name: &str| {
            let mut state = crate::proto::State::default();
            state.resources.insert(name.to_owned(), Default::default());
            let request = RunFunctionRequest {
                observed: Some(state),
                ..Default::default()
            };
            prost::Message::encode_to_vec(&request)
        };
        Bytes::from([one(first), one(second)].concat())
    }

    #[cfg(debug_assertions)]
    #[test]
    fn the_witness_tells_requests_apart_whatever_their_map_order() {
        let witness = Witness::of_bytes(&observed("a", "b"));
        assert_eq!(witness, Witness::of_bytes(&observed("b", "a")));
        assert_ne!(witness, Witness::of_bytes(&observed("a", "c")));
        assert_ne!(witness, Witness::of_bytes(&Bytes::from_static(&[0xff])));
    }

    #[test]
    fn the_oldest_answers_go_first_and_the_bound_holds() {
        let limit = 8 * (1000 + ENTRY_OVERHEAD);
        let memo = Memo::new(limit);
        for key in 0..20u128 {
            memo.remember(key, answer(1000));
            assert!(memo.bytes() <= limit, "{} over {limit}", memo.bytes());
        }
        assert!((0..12).all(|key| get(&memo, key).is_none()));
        assert!((12..20).all(|key| get(&memo, key).is_some()));
        assert_eq!(memo.bytes(), limit);
    }

    #[test]
    fn an_answer_over_an_eighth_of_the_bound_is_not_kept() {
        let memo = Memo::new(8 * (1000 + ENTRY_OVERHEAD));
        memo.remember(1, answer(1001));
        assert!(get(&memo, 1).is_none());
        assert_eq!(memo.bytes(), 0);
    }

    #[test]
    fn a_memo_of_no_bytes_is_off_and_keeps_nothing() {
        let memo = Memo::new(0);
        assert!(!memo.is_on());
        memo.remember(1, answer(0));
        assert!(get(&memo, 1).is_none());
    }
}
