//! Readiness, composite status and conditions (SPEC section 7).

use crate::catalog::Rclass;
use crate::input::Input;
use crate::plan::Planned;
use crate::proto::v1::{Condition, Ready, Status, Target};
use serde_json::{json, Map, Value};

type Object = Map<String, Value>;

pub const CONDITION_TYPE: &str = "RepositoriesReady";

/// The status of a condition type on an observed object: `Some("True")`, ...
pub fn condition<'a>(object: &'a Object, type_: &str) -> Option<&'a Value> {
    object
        .get("status")?
        .get("conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

fn condition_true(object: Option<&Object>, type_: &str) -> bool {
    object
        .and_then(|o| condition(o, type_))
        .is_some_and(|c| c["status"] == "True")
}

/// READY_TRUE when the observed resource's `Ready` condition is `True`.
pub fn readiness(observed: Option<&Object>) -> Ready {
    if condition_true(observed, "Ready") {
        Ready::True
    } else {
        Ready::False
    }
}

/// One item of `status.repositories`.
pub fn repository_status(
    p: &Planned,
    observed: Option<&Object>,
    input: &Input,
    warnings: &[String],
) -> Value {
    let mut status = Map::new();
    status.insert("name".into(), json!(p.name));
    status.insert("key".into(), json!(p.key));
    status.insert("rclass".into(), json!(p.kind.rclass.as_str()));
    status.insert("packageType".into(), json!(p.kind.package_type));
    status.insert("apiVersion".into(), json!(p.kind.api_version));
    status.insert("kind".into(), json!(p.kind.kind));
    status.insert("ready".into(), json!(condition_true(observed, "Ready")));
    status.insert("synced".into(), json!(condition_true(observed, "Synced")));
    status.insert("deletion".into(), json!(p.deletion.as_str()));
    status.insert("adopted".into(), json!(p.entry.import));
    if p.kind.rclass == Rclass::Virtual {
        status.insert("members".into(), json!(p.member_keys));
    }
    if let Some(base) = &input.artifactory_url {
        status.insert("url".into(), json!(format!("{base}/artifactory/{}", p.key)));
    }
    status.insert("warnings".into(), json!(warnings));
    Value::Object(status)
}

/// `RepositoriesReady` on the composite and its claim.
///
/// True (Available) when every repository is ready; False (Unavailable) when
/// one reports a failure; else False (Creating).
pub fn repositories_condition(planned: &[Planned], observed: &[Option<&Object>]) -> Condition {
    let not_ready: Vec<&str> = planned
        .iter()
        .zip(observed)
        .filter(|(_, o)| !condition_true(**o, "Ready"))
        .map(|(p, _)| p.key.as_str())
        .collect();
    let failing = observed.iter().flatten().any(|o| has_failure(o));
    let (status, reason, message) = if not_ready.is_empty() {
        (
            Status::ConditionTrue,
            "Available",
            format!("{} repositories are ready", planned.len()),
        )
    } else if failing {
        (
            Status::ConditionFalse,
            "Unavailable",
            format!("not ready: {}", list(&not_ready)),
        )
    } else {
        (
            Status::ConditionFalse,
            "Creating",
            format!("not ready yet: {}", list(&not_ready)),
        )
    };
    Condition {
        r#type: CONDITION_TYPE.into(),
        status: status as i32,
        reason: reason.into(),
        message: Some(message),
        target: Some(Target::CompositeAndClaim as i32),
    }
}

/// A Synced=False or a Ready=False that is not about creating.
fn has_failure(object: &Object) -> bool {
    let synced_false = condition(object, "Synced").is_some_and(|c| c["status"] == "False");
    let unavailable = condition(object, "Ready")
        .is_some_and(|c| c["status"] == "False" && c["reason"] == "Unavailable");
    synced_false || unavailable
}

/// The first keys of a long list, then how many more.
fn list(keys: &[&str]) -> String {
    const SHOWN: usize = 5;
    if keys.len() <= SHOWN {
        keys.join(", ")
    } else {
        format!(
            "{} and {} more",
            keys[..SHOWN].join(", "),
            keys.len() - SHOWN
        )
    }
}
