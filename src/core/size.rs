//! The size of a response, bounded by what Crossplane reads.
//!
//! Crossplane's function runner (`internal/xfn/function_runner.go`, v2.3.4) dials functions
//! with `grpc.NewClient` and no call options, so it reads a response with grpc-go's default
//! receive limit, 4 MiB (`defaultClientMaxReceiveMessageSize`, grpc-go v1.82.1, the release
//! Crossplane v2.3.4 builds with); `crossplane render` dials the same way. A larger response
//! fails the call with RESOURCE_EXHAUSTED on Crossplane's side, and the composite with it, with
//! nothing said about why. A claim of some 6,000 repositories renders that much: the call
//! measures what it renders as it goes, stops keeping resources once the response could not
//! be read, and fails with a problem that says how large the response would be and why.

use crate::core::problems::{Category, Findings};
use crate::proto::v1::RunFunctionResponse;
use crate::proto::Struct;
use prost::Message;

// Sizes and counts are added and multiplied in `u64`: on wasm32 `usize` is 32 bits, and the
// advice's product of repositories and bytes (5,000 × 4 MiB) overflows it, so the npm module and
// the component would advise another number than the server.

/// The largest response Crossplane reads (see the module's documentation).
pub(crate) const CROSSPLANE_MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// What each repository adds besides its resource: its item of `status.repositories` (see
/// `status::STATUS_ITEM_BYTES`), its name in the desired resources and the framing.
const PER_REPOSITORY_BYTES: usize = crate::core::status::STATUS_ITEM_BYTES + 16;

/// The response's size while it is being built.
pub(crate) struct ResponseSize {
    limit: u64,
    /// What passes through from the request: the desired state so far and the context.
    passed: u64,
    /// What this call adds: each resource rendered and its share of the status.
    added: u64,
    repositories: u64,
}

/// A length as a `u64` (lossless wherever `usize` is at most 64 bits).
fn as_u64(len: usize) -> u64 {
    u64::try_from(len).unwrap_or(u64::MAX)
}

impl ResponseSize {
    /// Starts from the response as it comes from the request (its desired state and context).
    /// Measuring them here costs nothing more: their encoding is kept for the response's.
    pub(crate) fn of(response: &RunFunctionResponse) -> ResponseSize {
        let passed = as_u64(response.desired.as_ref().map_or(0, Message::encoded_len))
            .saturating_add(as_u64(
                response.context.as_ref().map_or(0, Message::encoded_len),
            ));
        ResponseSize {
            limit: as_u64(CROSSPLANE_MAX_RESPONSE_BYTES),
            passed,
            added: 0,
            repositories: 0,
        }
    }

    /// Counts one rendered resource named `name`; whether the response still fits, and the
    /// resource is worth keeping.
    pub(crate) fn add(&mut self, name: &str, resource: &Struct) -> bool {
        let len = as_u64(resource.encoded_len() + name.len() + PER_REPOSITORY_BYTES);
        self.added = self.added.saturating_add(len);
        self.repositories += 1;
        self.fits()
    }

    fn total(&self) -> u64 {
        self.passed.saturating_add(self.added)
    }

    pub(crate) fn fits(&self) -> bool {
        self.total() <= self.limit
    }

    /// A problem when the response would not fit.
    pub(crate) fn check(&self, findings: &mut Findings) {
        if self.fits() {
            return;
        }
        let (total, limit) = (self.total(), self.limit);
        let passed = if self.passed > 0 {
            format!(
                ", of which {} pass through from the request (earlier steps' resources and the context)",
                mib(self.passed)
            )
        } else {
            String::new()
        };
        let room = limit.saturating_sub(self.passed);
        let fit = fit_in_one(self.repositories, room, self.added);
        findings.foremost_problem(
            Category::InvalidComposite,
            "spec.repositories",
            format!(
                "the response would be about {} for {} repositories{passed}: more than the {} Crossplane reads (its function runner uses gRPC's default receive limit), so Crossplane would fail the call without saying why",
                mib(total),
                self.repositories,
                mib(limit),
            ),
            format!("split the repositories over several composites: about {fit} fit in one"),
        );
    }

    /// Whether the estimate came near the limit: then the finished response is measured
    /// exactly ([`ResponseSize::measured`]), which otherwise would cost a walk of the status.
    pub(crate) fn near_limit(&self) -> bool {
        self.total() > self.limit / 4 * 3
    }

    /// The exact size of the finished response, in place of the estimate.
    pub(crate) fn measured(&mut self, response: &RunFunctionResponse) {
        self.added = as_u64(response.encoded_len()).saturating_sub(self.passed);
    }
}

/// How many of `repositories`, which added `added` bytes, fit in `room` bytes: the product is
/// taken in `u128`, so no count or size overflows it.
fn fit_in_one(repositories: u64, room: u64, added: u64) -> u64 {
    let fit = u128::from(repositories) * u128::from(room) / u128::from(added.max(1));
    u64::try_from(fit).unwrap_or(u64::MAX)
}

/// `4.8 MiB (5,033,164 bytes)`.
pub(crate) fn mib(bytes: u64) -> String {
    let mut digits = bytes.to_string();
    let mut at = digits.len();
    while at > 3 {
        at -= 3;
        digits.insert(at, ',');
    }
    format!(
        "{:.1} MiB ({digits} bytes)",
        bytes as f64 / (1024.0 * 1024.0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_said_in_mebibytes_and_bytes() {
        assert_eq!(mib(4 * 1024 * 1024), "4.0 MiB (4,194,304 bytes)");
        assert_eq!(mib(999), "0.0 MiB (999 bytes)");
    }

    #[test]
    fn the_advice_is_the_same_where_usize_is_32_bits() {
        // 5,000 repositories in 4,324,900 bytes, 4 MiB of room: 4,849 fit. As a `u32` product
        // (wasm32's `usize`), 5,000 × 4,194,304 wraps and gave 876.
        assert_eq!(fit_in_one(5_000, 4_194_304, 4_324_900), 4_849);
        assert_eq!(
            (5_000u32.wrapping_mul(4_194_304) / 4_324_900),
            876,
            "the overflow this guards against"
        );
        assert_eq!(fit_in_one(u64::MAX, u64::MAX, 1), u64::MAX);
        assert_eq!(fit_in_one(3, 10, 0), 30);
    }

    #[test]
    fn the_limit_is_grpc_go_s_default() {
        assert_eq!(CROSSPLANE_MAX_RESPONSE_BYTES, 4_194_304);
    }
}
