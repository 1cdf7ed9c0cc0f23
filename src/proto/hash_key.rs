//! The key of the content hashes: the secret XXH3 is given for a request's content key
//! (`request_key`) and a Struct's content hash (`structpb::hash`), one for the whole process.
//!
//! Both hashes add up the hashes of a map's entries, so that the order Go writes them in does
//! not count. With a key anyone knows, a sum is no defence against chosen input: anyone can
//! hash candidate entries offline and search for two sets of them with one sum, the k-sum
//! problem, which Wagner's k-tree algorithm solves for 128 bits in under a second (128 lists of
//! 2^17 label entries). Two composites that differ in a label then share a content key, and the
//! server's memo answers one with the other's answer.
//!
//! Keyed with a secret that never leaves the process, XXH3 cannot be evaluated outside it, so
//! there is nothing to search offline: the k-tree needs millions of entry hashes, and the only
//! place they exist is the server, which tells a caller none of them. This is a practical
//! bound, not a proof: XXH3 is not a keyed pseudo-random function by design, and a weakness of
//! it that holds for every secret would undo it (none is known for the lengths hashed here).
//! In debug builds and tests the server also keeps a second, independent digest beside each
//! answer and compares it on every hit, so a wrong hit fails loudly there.
//!
//! The server draws the secret from the operating system's random source when it starts and
//! hands it in here ([`HashKey::key_process`]) before it hashes anything. Every other build
//! keeps XXH3's own default secret, [`HashKey::fixed`], which keeps them pure:
//! the WebAssembly builds keep no memo, and the component is pre-initialised by a tool that
//! lets its initialisation call no import, a random source included (docs/design.md, "The
//! WebAssembly component"). `render` runs once on the caller's own files.

use std::sync::OnceLock;
use twox_hash::xxhash3_128::{RawHasher, SecretBuffer, DEFAULT_SECRET_LENGTH};
use twox_hash::XxHash3_128;

/// The bytes of a secret: XXH3's default length, as much as any length of input reads.
pub const SECRET_BYTES: usize = DEFAULT_SECRET_LENGTH;

/// The longest input XXH3 hashes without its loop over stripes.
const SHORT_INPUT: usize = 240;

/// XXH3 takes a secret of its default length, as every secret here is.
const SECRET_TAKEN: &str = "a secret of XXH3's default length";

/// The process's secret, set once: by [`HashKey::key_process`], or to the fixed one by the
/// first hash made before it.
static PROCESS_SECRET: OnceLock<[u8; SECRET_BYTES]> = OnceLock::new();

/// The key of a content hash: XXH3's secret.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HashKey {
    secret: &'static [u8; SECRET_BYTES],
}

/// The process's content hashes were keyed already: by an earlier call, or fixed by a hash made
/// before the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the content hashes of this process were keyed before its secret was handed in")]
pub struct AlreadyKeyed;

impl HashKey {
    /// XXH3's default secret, which anyone can compute hashes with.
    pub fn fixed() -> HashKey {
        HashKey {
            secret: SecretBuffer::default().into_secret(),
        }
    }

    /// The key of every content hash this process makes: the secret handed to
    /// [`HashKey::key_process`], else the fixed one, for the rest of the process.
    pub fn of_process() -> HashKey {
        HashKey {
            secret: PROCESS_SECRET.get_or_init(|| *HashKey::fixed().secret),
        }
    }

    /// Keys every content hash this process makes with `secret`, random bytes nobody outside
    /// the process knows; to be called once, before the first hash.
    pub fn key_process(secret: [u8; SECRET_BYTES]) -> Result<(), AlreadyKeyed> {
        PROCESS_SECRET.set(secret).map_err(|_| AlreadyKeyed)
    }

    /// A key of `secret`, apart from the process's.
    pub fn with_secret(secret: &'static [u8; SECRET_BYTES]) -> HashKey {
        HashKey { secret }
    }

    /// The hash of `bytes`.
    #[inline]
    pub(crate) fn hash(self, bytes: &[u8]) -> u128 {
        // Short input is latency-bound and inlined; XXH3's loop over longer input is not, as
        // `XxHash3_128::oneshot` does it.
        if bytes.len() <= SHORT_INPUT {
            self.oneshot(bytes)
        } else {
            self.hash_long(bytes)
        }
    }

    #[inline(never)]
    fn hash_long(self, bytes: &[u8]) -> u128 {
        self.oneshot(bytes)
    }

    #[inline(always)]
    fn oneshot(self, bytes: &[u8]) -> u128 {
        XxHash3_128::oneshot_with_secret(self.secret, bytes).expect(SECRET_TAKEN)
    }

    /// A hash of bytes written in parts, which allocates nothing.
    pub(crate) fn hasher(self) -> Hasher {
        Hasher {
            key: self,
            short: [0; SHORT_INPUT],
            len: 0,
            long: None,
        }
    }
}

/// A hash of bytes written in parts, under one key: the hash [`HashKey::hash`] gives of them
/// all. twox-hash's own streaming hasher hashes input of up to [`SHORT_INPUT`] bytes with XXH3's
/// default secret, whatever secret it is given (as XXH3's reference code does when it is given
/// a seed too): such input is gathered here and hashed at once, and only longer input streams.
pub(crate) struct Hasher {
    key: HashKey,
    short: [u8; SHORT_INPUT],
    len: usize,
    long: Option<RawHasher<&'static [u8; SECRET_BYTES]>>,
}

impl Hasher {
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        if let Some(long) = &mut self.long {
            long.write(bytes);
        } else if let Some(room) = self.short.get_mut(self.len..self.len + bytes.len()) {
            room.copy_from_slice(bytes);
            self.len += bytes.len();
        } else {
            let secret = SecretBuffer::new(0, self.key.secret).expect(SECRET_TAKEN);
            let long = self.long.insert(RawHasher::new(secret));
            long.write(&self.short[..self.len]);
            long.write(bytes);
        }
    }

    pub(crate) fn finish(&self) -> u128 {
        match &self.long {
            Some(long) => long.finish_128(),
            None => self.key.hash(&self.short[..self.len]),
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

    #[test]
    fn another_secret_gives_other_hashes_at_every_length() {
        let secret: &'static [u8; SECRET_BYTES] = Box::leak(Box::new(std::array::from_fn(|i| {
            (i as u8).wrapping_mul(151).wrapping_add(7)
        })));
        let keyed = HashKey::with_secret(secret);
        // Every branch of XXH3: empty, 1-3, 4-8, 9-16, 17-128, 129-240 and longer.
        for len in [0, 2, 6, 12, 100, 200, 240, 241, 1000] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            assert_ne!(
                keyed.hash(&bytes),
                HashKey::fixed().hash(&bytes),
                "{len} bytes"
            );
            // Written in parts, across the short input's bound and the stripes' too.
            for parts in [1, 3, 100] {
                let mut hasher = keyed.hasher();
                for part in bytes.chunks(bytes.len().div_ceil(parts).max(1)) {
                    hasher.write(part);
                }
                assert_eq!(
                    hasher.finish(),
                    keyed.hash(&bytes),
                    "{len} bytes, {parts} parts"
                );
            }
        }
    }
}
