//! The key of the content hashes: the seed XXH3 is given for a request's content key
//! (`request_key`) and a Struct's content hash (`structpb::hash`), one for the whole process.
//!
//! Both hashes add up the hashes of a map's entries, so that the order Go writes them in does
//! not count. With a key anyone knows, a sum is no defence against chosen input: anyone can
//! hash candidate entries offline and search for two sets of them with one sum, the k-sum
//! problem, which Wagner's k-tree algorithm solves for 128 bits in seconds (128 lists of 2^17
//! label entries; `structpb/collision_tests.rs`). Two composites that differ in a label then
//! share a content key, and the server's memo answers one with the other's answer.
//!
//! A seed alone defeats that search, because the search is offline: it needs millions of entry
//! hashes, and under a seed drawn from the operating system's random source, which never leaves
//! the process, nobody outside can compute one. The server tells a caller no hash; all a caller
//! can learn is whether a call was answered from the memo, one guess at a time among 2^64
//! seeds. What is left is chance, and any weakness of XXH3 that holds whatever the seed: XXH3
//! is fast, not a keyed pseudo-random function by design, so this is a practical bound rather
//! than a proof. In debug builds and tests the server also keeps a second, independent digest
//! beside each answer and compares it on every hit, so a wrong hit fails loudly there.
//!
//! Seeded XXH3 reads the seed alone up to 240 bytes and, beyond, a secret derived from it,
//! derived here once rather than for every such input (`oneshot_with_seed` derives it every
//! time); the short path keeps XXH3's default secret a constant the compiler folds, so a keyed
//! hash costs about what an unkeyed one did (docs/benchmarks-log.md, "Content hashes keyed per
//! process").
//!
//! The server draws the seed when it starts and hands it in here ([`HashKey::key_process`])
//! before it hashes anything. Every other build keeps the fixed seed, 0, [`HashKey::fixed`],
//! which keeps them pure: the WebAssembly builds keep no memo, and the component is
//! pre-initialised by a tool that lets its initialisation call no import, a random source
//! included (docs/design.md, "The WebAssembly component"). `render` runs once on the caller's
//! own files.

use std::sync::OnceLock;
use twox_hash::xxhash3_128::{SecretBuffer, DEFAULT_SECRET_LENGTH};
use twox_hash::XxHash3_128;

/// The longest input XXH3 hashes without its loop over stripes, from its seed alone.
const SHORT_INPUT: usize = 240;

/// XXH3's secrets here are all of its default length, which it takes.
const SECRET_TAKEN: &str = "a secret of XXH3's default length";

/// XXH3's secret for a seed, as long as its default one.
type Secret = [u8; DEFAULT_SECRET_LENGTH];

/// The process's key, set once: by [`HashKey::key_process`], or to the fixed one by the first
/// hash made before it.
static PROCESS_KEY: OnceLock<(u64, Secret)> = OnceLock::new();

/// The key of a content hash: XXH3's seed, and the secret XXH3 derives from it for input
/// longer than [`SHORT_INPUT`], derived once rather than for every such input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HashKey {
    seed: u64,
    secret: &'static Secret,
}

/// The process's content hashes were keyed already: by an earlier call, or fixed by a hash made
/// before the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the content hashes of this process were keyed before its seed was handed in")]
pub struct AlreadyKeyed;

impl HashKey {
    /// XXH3's default seed, 0, with which anyone can compute the hashes.
    pub fn fixed() -> HashKey {
        HashKey {
            seed: 0,
            secret: SecretBuffer::default().into_secret(),
        }
    }

    /// The key of every content hash this process makes: the seed handed to
    /// [`HashKey::key_process`], else the fixed one, for the rest of the process.
    pub fn of_process() -> HashKey {
        let (seed, secret) = PROCESS_KEY.get_or_init(|| (0, *HashKey::fixed().secret));
        HashKey {
            seed: *seed,
            secret,
        }
    }

    /// Keys every content hash this process makes with `seed`, random bits nobody outside the
    /// process knows; to be called once, before the first hash.
    pub fn key_process(seed: u64) -> Result<(), AlreadyKeyed> {
        PROCESS_KEY
            .set((seed, derived_secret(seed)))
            .map_err(|_| AlreadyKeyed)
    }

    /// The hash of `bytes`: XXH3-128 with the key's seed.
    #[inline]
    pub(crate) fn hash(self, bytes: &[u8]) -> u128 {
        if bytes.len() <= SHORT_INPUT {
            // Up to 240 bytes XXH3 reads its default secret, which this call leaves a constant
            // (`oneshot_with_seed` hides it from the optimiser), and the seed.
            XxHash3_128::oneshot_with_seed_and_secret(self.seed, self.secret, bytes)
                .expect(SECRET_TAKEN)
        } else {
            self.hash_long(bytes)
        }
    }

    /// Longer input is hashed with the secret XXH3 derives from the seed, which is what
    /// `oneshot_with_seed` would derive again for each.
    #[inline(never)]
    fn hash_long(self, bytes: &[u8]) -> u128 {
        XxHash3_128::oneshot_with_secret(self.secret, bytes).expect(SECRET_TAKEN)
    }

    /// A hash of bytes written in parts: the hash [`HashKey::hash`] gives of them all.
    pub(crate) fn hasher(self) -> Hasher {
        Hasher {
            key: self,
            short: [0; SHORT_INPUT],
            len: 0,
            long: Vec::new(),
        }
    }
}

/// The secret XXH3 derives from `seed` for long input.
fn derived_secret(seed: u64) -> Secret {
    SecretBuffer::with_seed(seed, [0; DEFAULT_SECRET_LENGTH])
        .map(SecretBuffer::into_secret)
        .unwrap_or_else(|_| unreachable!("{SECRET_TAKEN}"))
}

/// A hash of bytes written in parts, under one key: the parts gathered, then hashed at once.
/// twox-hash's streaming hasher would do the same for up to 240 bytes, with the seed a run-time
/// value in its path for them, and its second caller of XXH3's long path kept the compiler from
/// inlining that path into the one-shot hash (docs/benchmarks-log.md, "Content hashes keyed per
/// process"). Up to 240 bytes are gathered here without allocating.
pub(crate) struct Hasher {
    key: HashKey,
    short: [u8; SHORT_INPUT],
    len: usize,
    /// Every part, once they are more than `short` holds.
    long: Vec<u8>,
}

impl Hasher {
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        if !self.long.is_empty() {
            self.long.extend_from_slice(bytes);
        } else if let Some(room) = self.short.get_mut(self.len..self.len + bytes.len()) {
            room.copy_from_slice(bytes);
            self.len += bytes.len();
        } else {
            self.long.extend_from_slice(&self.short[..self.len]);
            self.long.extend_from_slice(bytes);
        }
    }

    pub(crate) fn finish(&self) -> u128 {
        if self.long.is_empty() {
            self.key.hash(&self.short[..self.len])
        } else {
            self.key.hash(&self.long)
        }
    }
}

#[cfg(test)]
impl HashKey {
    /// A key of `seed`, apart from the process's.
    pub(crate) fn with_seed(seed: u64) -> HashKey {
        HashKey {
            seed,
            secret: Box::leak(Box::new(derived_secret(seed))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_key_is_xxh3_unkeyed() {
        let bytes = b"claim-name: alpha";
        assert_eq!(HashKey::fixed().hash(bytes), XxHash3_128::oneshot(bytes));
        let mut parts = HashKey::fixed().hasher();
        parts.write(&bytes[..5]);
        parts.write(&bytes[5..]);
        assert_eq!(parts.finish(), XxHash3_128::oneshot(bytes));
    }

    /// XXH3's seeded hash at every length: the seed alone up to 240 bytes, the secret derived
    /// from it beyond, whole or in parts; and other than the unkeyed hash at every length.
    #[test]
    fn a_key_hashes_as_xxh3_with_its_seed_at_every_length() {
        let keyed = HashKey::with_seed(0x0123_4567_89ab_cdef);
        // Every branch of XXH3: empty, 1-3, 4-8, 9-16, 17-128, 129-240 and longer.
        for len in [0, 2, 6, 12, 100, 200, 240, 241, 1000] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            let expected = XxHash3_128::oneshot_with_seed(0x0123_4567_89ab_cdef, &bytes);
            assert_eq!(keyed.hash(&bytes), expected, "{len} bytes");
            assert_ne!(
                keyed.hash(&bytes),
                HashKey::fixed().hash(&bytes),
                "{len} bytes"
            );
            for parts in [1, 3, 100] {
                let mut hasher = keyed.hasher();
                for part in bytes.chunks(bytes.len().div_ceil(parts).max(1)) {
                    hasher.write(part);
                }
                assert_eq!(hasher.finish(), expected, "{len} bytes, {parts} parts");
            }
        }
    }
}
