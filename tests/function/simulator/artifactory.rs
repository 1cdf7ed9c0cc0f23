//! Artifactory as the simulator keeps it: repositories by key, compared without case (it
//! refuses a create with 400 "Case insensitive repository key already exists"), the few fields
//! the model follows, and a log of every write with who made it, which the invariants read.

use std::collections::BTreeMap;

/// The fields of a repository the model follows, as the provider's `forProvider` names them.
/// `description` defaults to "" and `xrayIndex` to false (terraform-provider-artifactory BASE
/// and LOCAL attributes); `handleSnapshots` defaults to true for maven (its java attributes),
/// a non-zero default that late-initialisation never copies back when the live value is false.
pub const FIELDS: [(&str, Field); 3] = [
    ("description", Field::Text("")),
    ("xrayIndex", Field::Flag(false)),
    ("handleSnapshots", Field::Flag(true)),
];

/// The fields of [`FIELDS`] a repository of `package` has: `handleSnapshots` only a java
/// type's (terraform-provider-artifactory's java attributes, of maven, gradle, ivy and sbt).
pub fn fields_of(package: &str) -> impl Iterator<Item = &'static (&'static str, Field)> {
    let java = matches!(package, "maven" | "gradle" | "ivy" | "sbt");
    FIELDS
        .iter()
        .filter(move |(name, _)| java || *name != "handleSnapshots")
}

/// A field's Terraform default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Field {
    Text(&'static str),
    Flag(bool),
}

impl Field {
    pub fn value(self) -> serde_json::Value {
        match self {
            Field::Text(text) => serde_json::json!(text),
            Field::Flag(flag) => serde_json::json!(flag),
        }
    }
}

/// Who wrote to Artifactory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// Another team, a person, a script: outside every claim.
    Outside,
    /// The provider, reconciling the managed resource `resource` (the composed resource name)
    /// of claim `claim` (0 the claim under test, 1 a second claim of another team), which
    /// carried the function's origin annotation `origin` then.
    Provider {
        claim: u8,
        resource: String,
        origin: Option<String>,
    },
}

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Create,
    /// The fields whose value changed.
    Update(Vec<String>),
    Delete,
}

/// One write, in the order Artifactory took it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    pub actor: Actor,
    /// The key as Artifactory has it.
    pub key: String,
    pub op: Op,
    /// Which repository of the key: [`Repository::serial`].
    pub serial: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Repository {
    /// The key in the case it was created with.
    pub key: String,
    pub package_type: String,
    pub fields: BTreeMap<String, serde_json::Value>,
    /// Its place among every repository ever created: a key deleted and made again names
    /// another repository, which the provider cannot tell from the first.
    pub serial: u64,
}

/// Artifactory's repositories, by lower-cased key, and every write made to them.
#[derive(Debug, Clone, Default)]
pub struct Artifactory {
    repositories: BTreeMap<String, Repository>,
    pub writes: Vec<Write>,
    created: u64,
}

impl Artifactory {
    pub fn get(&self, key: &str) -> Option<&Repository> {
        self.repositories.get(&key.to_lowercase())
    }

    /// Creates `key` with `fields` over the Terraform defaults; `false` (nothing written) when
    /// the key exists in any case.
    pub fn create(
        &mut self,
        actor: Actor,
        key: &str,
        package_type: &str,
        fields: &BTreeMap<String, serde_json::Value>,
    ) -> bool {
        if self.get(key).is_some() {
            return false;
        }
        let mut all: BTreeMap<String, serde_json::Value> = fields_of(package_type)
            .map(|(name, default)| (name.to_string(), default.value()))
            .collect();
        all.extend(fields.clone());
        self.created += 1;
        self.repositories.insert(
            key.to_lowercase(),
            Repository {
                key: key.to_owned(),
                package_type: package_type.to_owned(),
                fields: all,
                serial: self.created,
            },
        );
        self.writes.push(Write {
            actor,
            key: key.to_owned(),
            op: Op::Create,
            serial: self.created,
        });
        true
    }

    /// Sets `fields`; logs the ones that changed (nothing when none did).
    pub fn update(
        &mut self,
        actor: Actor,
        key: &str,
        fields: &BTreeMap<String, serde_json::Value>,
    ) -> bool {
        let Some(repository) = self.repositories.get_mut(&key.to_lowercase()) else {
            return false;
        };
        let mut changed = Vec::new();
        for (name, value) in fields {
            if repository.fields.get(name) != Some(value) {
                repository.fields.insert(name.clone(), value.clone());
                changed.push(name.clone());
            }
        }
        if !changed.is_empty() {
            let key = repository.key.clone();
            self.writes.push(Write {
                actor,
                key,
                op: Op::Update(changed),
                serial: repository.serial,
            });
        }
        true
    }

    pub fn delete(&mut self, actor: Actor, key: &str) -> bool {
        let Some(repository) = self.repositories.remove(&key.to_lowercase()) else {
            return false;
        };
        self.writes.push(Write {
            actor,
            key: repository.key,
            op: Op::Delete,
            serial: repository.serial,
        });
        true
    }
}
