//! What happens to live repositories (docs/lifecycle.md): one room for every rule that keeps a
//! claim from renaming, replacing, taking over, orphaning or deleting a repository by mistake,
//! and for the words the call says about them.
//!
//! Which file keeps each rule (the phase table is docs/lifecycle.md's "Phases", and
//! [`phase::PhaseName`] is its code):
//!
//! - [`phase`]: the table itself ([`phase::PhaseName`]: what each phase renders, whether it
//!   can be ready, what is said of it and what it lets the provider change) and the origins a
//!   managed resource carries;
//! - [`observed`]: what the function reads of an observed managed resource, and suspected
//!   leaks;
//! - [`adoption`]: the transitions: which phase each entry is in at this call (the create
//!   guard, held keys, imports, takeovers, virtuals that wait, moves) and the policies it is
//!   rendered with;
//! - [`guards`]: changes refused on a live repository (key, kind, `spec.projectKey`, the
//!   naming format, the provider's group move);
//! - [`consequences`]: what an answer changes that the claim's author should hear of first,
//!   and fields whose change would replace the repository (refused);
//! - [`takeover`]: the preview of what taking an observed repository over would change;
//! - [`retirement`]: repositories that left the spec, orphaned before they go, and moves;
//! - [`conflicts`]: keys another composite manages;
//! - [`previous`]: what the previous call said (phases, previews, retirements), so that each
//!   result is given once, where what it says begins;
//! - [`words`]: the results the call gives about all of the above.
//!
//! Each rule works on [`Repository`], one entry of the claim through the call.

pub(crate) mod adoption;
pub(crate) mod conflicts;
pub(crate) mod consequences;
pub(crate) mod guards;
pub(crate) mod observed;
pub(crate) mod phase;
pub(crate) mod previous;
pub(crate) mod retirement;
pub(crate) mod takeover;
pub(crate) mod words;

use crate::core::catalog::Kind;
use crate::core::plan::Planned;
use crate::proto::Struct;
use adoption::Adoption;
use observed::{leak_suspected, Observed};
use takeover::Preview;

/// One repository of the claim through the call: what the plan made of its entry, what is live
/// of it, the phase the lifecycle gives it, and what is rendered and previewed for it. The call
/// (`core::function`) makes one per planned entry and each stage fills in its part, so that no
/// stage keeps a list of its own to be zipped with the others by position.
pub(crate) struct Repository<'a> {
    /// Kind, key, settings and wiring of the entry (`plan`, `wiring`), with the management
    /// policies and deletion its phase renders (`lifecycle::adoption`).
    pub planned: Planned<'a>,
    /// The observed composed resource of the entry's name, read: the live repository, as the
    /// provider last saw it.
    pub observed: Option<Observed<'a>>,
    /// Its phase and origin, decided by `lifecycle::adoption::decide_phases`.
    pub adoption: Adoption,
    /// The kind of the other provider API that could hold its key on this cluster, where the
    /// cluster serves it (`lifecycle::conflicts`).
    pub other_kind: Option<&'static Kind>,
    /// The managed resource rendered (`compose`): `None` before, and once it is handed to the
    /// desired state.
    pub resource: Option<Struct>,
    /// What taking the repository over would change, where its phase shows it.
    pub preview: Option<Preview>,
    /// Whether the provider may have created the repository without recording it.
    pub leak: bool,
}

impl<'a> Repository<'a> {
    pub(crate) fn new(planned: Planned<'a>, observed: Option<Observed<'a>>) -> Self {
        Repository {
            planned,
            observed,
            adoption: Adoption::default(),
            other_kind: None,
            resource: None,
            preview: None,
            leak: observed.as_ref().is_some_and(leak_suspected),
        }
    }
}
