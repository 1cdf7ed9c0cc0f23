//! The phase table (docs/lifecycle.md, "Phases") as code: where an entry stands between the
//! claim and the repository its key names, how it came under the claim, and, for each phase,
//! what it is rendered with, whether it can be ready, what the call says of it and what it lets
//! the provider change. Every rule is a `match` with an arm for each phase, so that a new phase
//! does not compile until each of its policies is decided; `tests/repo/docs.rs` holds the
//! documented table to [`PhaseName`], row by row.

/// The policies of a new entry until its create is confirmed: create a free key, only observe
/// a taken one.
pub(crate) const GUARD_POLICIES: [&str; 2] = ["Observe", "Create"];
/// The policies of a held or imported entry.
pub(crate) const OBSERVE_ONLY: [&str; 1] = ["Observe"];

/// How a repository came under this claim: written on the managed resource
/// (`observed::ORIGIN`), so that the next call knows without asking the composite's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Rendered to create its key; the create is not confirmed yet.
    Creating,
    /// A create of ours succeeded.
    Created,
    /// The key belonged to a repository outside this claim: held.
    Taken,
    /// Adopted with `import: true`.
    Imported,
    /// Handed over from another composed resource of this composite (docs/design.md, "A move").
    Moved,
}

impl Origin {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Origin::Creating => "creating",
            Origin::Created => "created",
            Origin::Taken => "taken",
            Origin::Imported => "imported",
            Origin::Moved => "moved",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Origin> {
        Some(match text {
            "creating" => Origin::Creating,
            "created" => Origin::Created,
            "taken" => Origin::Taken,
            "imported" => Origin::Imported,
            "moved" => Origin::Moved,
            _ => return None,
        })
    }

    /// The origin a key's new resource carries while the key moves to it from `old`'s: what
    /// the key was to the claim, so that a move neither takes a held key over nor skips the
    /// adoption of an import. A key this claim created (or that the function found composed
    /// before the create guard) is `moved`; one whose create was never confirmed stays
    /// `creating`, so the create guard judges it again.
    pub(crate) fn carried(old: Option<Origin>) -> Origin {
        match old {
            Some(Origin::Taken) => Origin::Taken,
            Some(Origin::Imported) => Origin::Imported,
            Some(Origin::Creating) => Origin::Creating,
            Some(Origin::Created | Origin::Moved) | None => Origin::Moved,
        }
    }
}

/// Where an entry stands, with what the call found about it (why it is held, what it waits
/// for). Its row of the table is [`Phase::name`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Phase {
    /// Rendered to create the key: `["Observe", "Create"]` (or the entry's own policies, with
    /// `createGuard: false`).
    Creating,
    /// The provider shows a create of ours succeeded: the entry's own policies from this call.
    Created,
    /// The key is taken outside this claim, or an import cannot go on: observed only.
    Held(Hold),
    /// Imported, observed only; `verified` once the provider has observed the repository.
    Adopted { verified: bool },
    /// Adopted, and given wider policies at this call.
    TakingOver,
    /// Managed with the entry's own policies.
    Managed,
    /// Its key moves to it from another composed resource of this composite, which is
    /// released first: observed only meanwhile, carrying the old resource's origin
    /// ([`Origin::carried`]), so that the key stays this claim's and is handed over as what it
    /// was.
    Moving,
    /// Not rendered yet.
    Waiting(Wait),
}

/// Why an entry is held.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Hold {
    /// The repository existed before this claim asked for its key.
    Existed,
    /// Artifactory refused the create: the key exists, perhaps in another case. The provider's
    /// message.
    CreateRefused(String),
    /// The create failed, yet the repository exists: whether the failed create made it cannot
    /// be told. The provider's message.
    CreateUnconfirmed(String),
    /// The apply's success is dated no earlier than the first sight of the repository, and the
    /// provider runs upjet's no-fork clients, which report a create refused because the key
    /// existed in just that way: whose repository it is cannot be told. The two times.
    CreateUnproven { succeeded: String, observed: String },
    /// `import: true` for a key Artifactory does not have: the provider's message.
    ImportMissing(String),
    /// The imported repository's package type is not the entry's.
    ImportMismatch { live: String },
    /// A virtual lists an entry that is held: its key.
    Member { key: String },
}

/// Why an entry is not rendered yet.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Wait {
    /// Its name is still a resource's that left the spec and is retiring (or one being
    /// deleted): the new entry is made once that resource is gone. Its key.
    NameRetiring { key: String },
    /// A new virtual waits until this claim has created or adopted these members.
    Members(Vec<String>),
    /// A new virtual would aggregate these held entries.
    HeldMembers(Vec<String>),
}

/// A row of the phase table: a phase as `status.repositories[].phase` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PhaseName {
    /// `creating`: rendered to create a free key.
    Creating,
    /// `created`: a create of ours succeeded at this call.
    Created,
    /// `held`: the key is not this claim's; observed only.
    Held,
    /// `adopted`: imported, observed only.
    Adopted,
    /// `takingOver`: an adopted repository given the entry's own policies at this call.
    TakingOver,
    /// `managed`: the entry's own policies.
    Managed,
    /// `waiting`: not rendered yet: a new virtual whose members are not the claim's yet, or a
    /// name whose old resource is still retiring.
    Waiting,
    /// `moving`: the key moves here from another composed resource; observed only until that
    /// one is gone.
    Moving,
}

/// What an entry's managed resource is rendered with in a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rendering {
    /// [`GUARD_POLICIES`]: create a free key, only observe a taken one.
    Guard,
    /// [`OBSERVE_ONLY`].
    ObserveOnly,
    /// The entry's own management policies.
    OwnPolicies,
    /// Left out of the desired state.
    NotRendered,
}

/// What the provider may do to the repository in a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Nothing: the repository is observed, or not rendered.
    Nothing,
    /// Create the key if it is free; a taken key is only observed.
    CreateOnly,
    /// Whatever the entry's own policies allow.
    AsTheEntrySays,
}

impl PhaseName {
    /// Every phase, in the order of the documented table.
    pub const ALL: [PhaseName; 8] = [
        PhaseName::Creating,
        PhaseName::Created,
        PhaseName::Held,
        PhaseName::Adopted,
        PhaseName::TakingOver,
        PhaseName::Managed,
        PhaseName::Waiting,
        PhaseName::Moving,
    ];

    /// The name in `status.repositories[].phase`.
    pub fn as_str(self) -> &'static str {
        match self {
            PhaseName::Creating => "creating",
            PhaseName::Created => "created",
            PhaseName::Held => "held",
            PhaseName::Adopted => "adopted",
            PhaseName::TakingOver => "takingOver",
            PhaseName::Managed => "managed",
            PhaseName::Waiting => "waiting",
            PhaseName::Moving => "moving",
        }
    }

    /// The phase a status names; `None` for a name this version does not know.
    pub fn parse(text: &str) -> Option<PhaseName> {
        PhaseName::ALL
            .into_iter()
            .find(|phase| phase.as_str() == text)
    }

    /// What the entry is rendered with. `creating` renders the guard unless the entry's own
    /// policies cannot create (then `["Observe"]`) or `createGuard: false` (its own policies).
    pub fn rendering(self) -> Rendering {
        match self {
            PhaseName::Creating => Rendering::Guard,
            PhaseName::Held | PhaseName::Adopted | PhaseName::Moving => Rendering::ObserveOnly,
            PhaseName::Created | PhaseName::TakingOver | PhaseName::Managed => {
                Rendering::OwnPolicies
            }
            PhaseName::Waiting => Rendering::NotRendered,
        }
    }

    /// Whether the entry is ready when its managed resource is: a held key exists, so the
    /// provider reports it ready, but it is not the claim's.
    pub fn can_be_ready(self) -> bool {
        match self {
            PhaseName::Creating
            | PhaseName::Created
            | PhaseName::Adopted
            | PhaseName::TakingOver
            | PhaseName::Managed => true,
            PhaseName::Held | PhaseName::Waiting | PhaseName::Moving => false,
        }
    }

    /// The reasons of the results a call gives for an entry in this phase (each said where the
    /// phase, or what it shows, begins; `lifecycle::words`).
    pub fn results(self) -> &'static [&'static str] {
        match self {
            PhaseName::Creating => &["RepositoriesCreating", "CreateFailed", "CannotCreate"],
            PhaseName::Created => &[],
            PhaseName::Managed => &[],
            PhaseName::Held => &["RepositoryHeld", "TakeoverPreview"],
            PhaseName::Adopted => &["RepositoriesCreating", "TakeoverPreview"],
            PhaseName::TakingOver => &["TakingOver"],
            PhaseName::Waiting => &["RepositoryWaiting"],
            PhaseName::Moving => &["RepositoryMoving"],
        }
    }

    /// What the provider may change in Artifactory while the entry is in this phase.
    pub fn lets_change(self) -> Change {
        match self {
            PhaseName::Creating => Change::CreateOnly,
            PhaseName::Created | PhaseName::TakingOver | PhaseName::Managed => {
                Change::AsTheEntrySays
            }
            PhaseName::Held | PhaseName::Adopted | PhaseName::Waiting | PhaseName::Moving => {
                Change::Nothing
            }
        }
    }
}

impl Phase {
    /// The phase's row of the table.
    pub(crate) fn name(&self) -> PhaseName {
        match self {
            Phase::Creating => PhaseName::Creating,
            Phase::Created => PhaseName::Created,
            Phase::Held(_) => PhaseName::Held,
            Phase::Adopted { .. } => PhaseName::Adopted,
            Phase::TakingOver => PhaseName::TakingOver,
            Phase::Managed => PhaseName::Managed,
            Phase::Moving => PhaseName::Moving,
            Phase::Waiting(_) => PhaseName::Waiting,
        }
    }

    /// The phase's name in `status.repositories[].phase`.
    pub(crate) fn as_str(&self) -> &'static str {
        self.name().as_str()
    }

    /// Whether the entry's resource is left out of the desired state.
    pub(crate) fn is_waiting(&self) -> bool {
        self.name().rendering() == Rendering::NotRendered
    }

    /// Whether the repository is only observed, or taken over at this call, with what the
    /// provider read of it: the phases that show a takeover preview.
    pub(crate) fn shows_preview(&self) -> bool {
        match self {
            Phase::Adopted { verified } => *verified,
            Phase::TakingOver => true,
            Phase::Held(hold) => match hold {
                Hold::Existed
                | Hold::CreateRefused(_)
                | Hold::CreateUnconfirmed(_)
                | Hold::CreateUnproven { .. } => true,
                Hold::ImportMissing(_) | Hold::ImportMismatch { .. } | Hold::Member { .. } => false,
            },
            Phase::Creating
            | Phase::Created
            | Phase::Managed
            | Phase::Moving
            | Phase::Waiting(_) => false,
        }
    }

    pub(crate) fn is_held(&self) -> bool {
        self.name() == PhaseName::Held
    }

    /// Whether this claim holds the repository: created by it, adopted and seen, or managed.
    pub(crate) fn is_ours(&self) -> bool {
        match self {
            Phase::Created | Phase::Managed | Phase::TakingOver => true,
            Phase::Adopted { verified } => *verified,
            Phase::Creating | Phase::Held(_) | Phase::Moving | Phase::Waiting(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_read_back_what_they_write() {
        for origin in [
            Origin::Creating,
            Origin::Created,
            Origin::Taken,
            Origin::Imported,
            Origin::Moved,
        ] {
            assert_eq!(Origin::parse(origin.as_str()), Some(origin));
        }
        assert_eq!(Origin::parse("adopted"), None);
    }

    #[test]
    fn phases_read_back_what_they_write() {
        for phase in PhaseName::ALL {
            assert_eq!(PhaseName::parse(phase.as_str()), Some(phase));
        }
        assert_eq!(PhaseName::parse("Managed"), None);
        assert_eq!(
            Phase::Moving.name(),
            PhaseName::Moving,
            "a move is its own row"
        );
        assert_eq!(
            Phase::Waiting(Wait::NameRetiring { key: "libs".into() }).name(),
            PhaseName::Waiting
        );
    }
}
