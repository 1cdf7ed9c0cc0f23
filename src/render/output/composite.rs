//! The composite resource as `crossplane render` prints it: the input XR's identity, the
//! desired composite's fields, the `Ready` condition from the resources' readiness (or the
//! desired composite's), and the functions' conditions.

use super::metadata::{object_entry, set_metadata_string};
use crate::proto::v1::{Condition, Ready, State, Status};
use crate::proto::Struct;
use crate::render::load::{str_at, Object};
use crate::render::Result;
use anyhow::Error;
use serde_json::{json, Map, Value};

/// render's fixed `lastTransitionTime`: real times would only be noise.
pub(super) const CONDITION_TIME: &str = "2024-01-01T00:00:00Z";
/// Condition types only Crossplane may set; functions' conditions of these
/// types are ignored.
const SYSTEM_CONDITION_TYPES: [&str; 3] = ["Ready", "Synced", "Healthy"];

/// The desired composite as the pipeline left it, identified by the input
/// XR's apiVersion, kind, name and namespace, with its conditions set.
pub(super) fn composite(input: &Object, desired: &State, conditions: &[Condition]) -> Object {
    let mut xr = desired
        .composite
        .as_ref()
        .and_then(|c| c.resource.clone())
        .map(Struct::into_fields)
        .unwrap_or_default();
    xr.insert("apiVersion".into(), json!(str_at(input, &["apiVersion"])));
    xr.insert("kind".into(), json!(str_at(input, &["kind"])));
    set_metadata_string(&mut xr, "name", str_at(input, &["metadata", "name"]));
    set_metadata_string(
        &mut xr,
        "namespace",
        str_at(input, &["metadata", "namespace"]),
    );
    let mut list = read_conditions(&xr);
    set_condition(&mut list, ready_condition(desired));
    for condition in conditions
        .iter()
        .filter(|c| !SYSTEM_CONDITION_TYPES.contains(&c.r#type.as_str()))
    {
        set_condition(&mut list, XpCondition::from_function(condition));
    }
    write_conditions(&mut xr, &list);
    xr
}

/// `Ready` from the desired composite's readiness, else from the composed
/// resources: all `READY_TRUE` (or none) is Available, anything else is
/// Creating with the unready names.
fn ready_condition(desired: &State) -> XpCondition {
    let composite_ready = desired
        .composite
        .as_ref()
        .map_or(Ready::Unspecified as i32, |c| c.ready);
    let unready: Vec<&str> = desired
        .resources
        .iter()
        .filter(|(_, r)| r.ready != Ready::True as i32)
        .map(|(name, _)| name.as_str())
        .collect();
    if composite_ready == Ready::False as i32 {
        XpCondition::ready("False", "Creating", "")
    } else if composite_ready == Ready::Unspecified as i32 && !unready.is_empty() {
        let message = format!("Unready resources: {}", stable_n_and_some_more(3, &unready));
        XpCondition::ready("False", "Creating", &message)
    } else {
        XpCondition::ready("True", "Available", "")
    }
}

/// crossplane-runtime's `StableNAndSomeMore`: sorted, at most `n` names,
/// `a, b, and c` for exactly three, `a, b, c, and 2 more` beyond.
pub(super) fn stable_n_and_some_more(n: usize, names: &[&str]) -> String {
    let mut names = names.to_vec();
    names.sort_unstable();
    match names.len() {
        len if len > n => format!("{}, and {} more", names[..n].join(", "), len - n),
        len if len == n && n > 1 => format!("{}, and {}", names[..n - 1].join(", "), names[n - 1]),
        _ => names.join(", "),
    }
}

/// `-x`: the input XR's spec and metadata replace the rendered ones.
pub(super) fn copy_spec_and_metadata(input: &Object, xr: &mut Object) -> Result<()> {
    for field in ["spec", "metadata"] {
        let value = input.get(field).ok_or_else(|| {
            Error::msg(format!("{field}: no such field"))
                .context(format!("cannot get composite resource {field}"))
        })?;
        xr.insert(field.into(), value.clone());
    }
    Ok(())
}

/// A crossplane-runtime `Condition` as it survives a JSON round trip:
/// unknown fields dropped, `lastTransitionTime` in UTC seconds or `null`.
#[derive(Debug, Clone, PartialEq, Default)]
struct XpCondition {
    r#type: String,
    status: String,
    last_transition_time: Option<String>,
    reason: String,
    message: String,
    observed_generation: i64,
}

impl XpCondition {
    fn ready(status: &str, reason: &str, message: &str) -> XpCondition {
        XpCondition {
            r#type: "Ready".into(),
            status: status.into(),
            last_transition_time: Some(CONDITION_TIME.into()),
            reason: reason.into(),
            message: message.into(),
            observed_generation: 0,
        }
    }

    fn from_function(condition: &Condition) -> XpCondition {
        let status = match Status::try_from(condition.status) {
            Ok(Status::ConditionTrue) => "True",
            Ok(Status::ConditionFalse) => "False",
            _ => "Unknown",
        };
        XpCondition {
            r#type: condition.r#type.clone(),
            status: status.into(),
            last_transition_time: Some(CONDITION_TIME.into()),
            reason: condition.reason.clone(),
            message: condition.message.clone().unwrap_or_default(),
            observed_generation: 0,
        }
    }

    fn from_json(value: &Value) -> XpCondition {
        let text = |key: &str| {
            value
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        XpCondition {
            r#type: text("type"),
            status: text("status"),
            last_transition_time: value
                .get("lastTransitionTime")
                .and_then(Value::as_str)
                .and_then(rfc3339_utc),
            reason: text("reason"),
            message: text("message"),
            observed_generation: value
                .get("observedGeneration")
                .and_then(Value::as_i64)
                .unwrap_or(0),
        }
    }

    fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("type".into(), json!(self.r#type));
        object.insert("status".into(), json!(self.status));
        object.insert(
            "lastTransitionTime".into(),
            json!(self.last_transition_time),
        );
        object.insert("reason".into(), json!(self.reason));
        if !self.message.is_empty() {
            object.insert("message".into(), json!(self.message));
        }
        if self.observed_generation != 0 {
            object.insert("observedGeneration".into(), json!(self.observed_generation));
        }
        Value::Object(object)
    }

    /// Equal apart from the transition time.
    fn same_as(&self, other: &XpCondition) -> bool {
        (
            &self.r#type,
            &self.status,
            &self.reason,
            &self.message,
            self.observed_generation,
        ) == (
            &other.r#type,
            &other.status,
            &other.reason,
            &other.message,
            other.observed_generation,
        )
    }
}

fn read_conditions(xr: &Object) -> Vec<XpCondition> {
    let list = xr
        .get("status")
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array);
    list.map(|items| items.iter().map(XpCondition::from_json).collect())
        .unwrap_or_default()
}

fn write_conditions(xr: &mut Object, list: &[XpCondition]) {
    let status = object_entry(xr, "status");
    status.insert(
        "conditions".into(),
        Value::Array(list.iter().map(XpCondition::to_json).collect()),
    );
}

/// crossplane-runtime's `SetConditions`: a condition replaces those of its
/// type (kept as they are when equal apart from the time), else is appended.
fn set_condition(list: &mut Vec<XpCondition>, new: XpCondition) {
    let mut exists = false;
    for existing in list.iter_mut().filter(|c| c.r#type == new.r#type) {
        exists = true;
        if !existing.same_as(&new) {
            *existing = new.clone();
        }
    }
    if !exists {
        list.push(new);
    }
}

/// An RFC 3339 time as Kubernetes writes it back: in UTC, whole seconds.
fn rfc3339_utc(text: &str) -> Option<String> {
    crate::core::time::parse_rfc3339(text).map(|t| crate::render::time::format_utc(t.seconds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::v1::Resource;
    use crate::proto::Struct;

    fn object(value: Value) -> Object {
        value.as_object().cloned().unwrap()
    }

    fn state(ready: &[(&str, Ready)]) -> State {
        let resources = ready
            .iter()
            .map(|(name, ready)| {
                (
                    name.to_string(),
                    Resource {
                        ready: *ready as i32,
                        ..Default::default()
                    },
                )
            })
            .collect();
        State {
            composite: None,
            resources,
        }
    }

    fn conditions_of(xr: &Object) -> Value {
        xr["status"]["conditions"].clone()
    }

    #[test]
    fn n_and_some_more() {
        assert_eq!(stable_n_and_some_more(3, &["b"]), "b");
        assert_eq!(stable_n_and_some_more(3, &["b", "a"]), "a, b");
        assert_eq!(stable_n_and_some_more(3, &["c", "a", "b"]), "a, b, and c");
        assert_eq!(
            stable_n_and_some_more(3, &["e", "d", "c", "a", "b"]),
            "a, b, c, and 2 more"
        );
    }

    #[test]
    fn ready_when_every_resource_is_ready_or_there_are_none() {
        for desired in [state(&[]), state(&[("a", Ready::True)])] {
            assert_eq!(
                ready_condition(&desired),
                XpCondition::ready("True", "Available", ""),
            );
        }
    }

    #[test]
    fn creating_names_the_unready_resources() {
        let desired = state(&[
            ("d", Ready::True),
            ("c", Ready::False),
            ("b", Ready::Unspecified),
            ("a", Ready::False),
            ("e", Ready::False),
        ]);
        let condition = ready_condition(&desired);
        assert_eq!(
            condition,
            XpCondition::ready(
                "False",
                "Creating",
                "Unready resources: a, b, c, and 1 more"
            )
        );
    }

    #[test]
    fn the_desired_composite_readiness_wins() {
        let mut desired = state(&[("a", Ready::False)]);
        desired.composite = Some(Resource {
            ready: Ready::True as i32,
            ..Default::default()
        });
        assert_eq!(
            ready_condition(&desired),
            XpCondition::ready("True", "Available", "")
        );
        let mut desired = state(&[("a", Ready::True)]);
        desired.composite = Some(Resource {
            ready: Ready::False as i32,
            ..Default::default()
        });
        assert_eq!(
            ready_condition(&desired),
            XpCondition::ready("False", "Creating", "")
        );
    }

    #[test]
    fn the_composite_is_identified_by_the_input_and_gets_conditions() {
        let input = object(
            json!({"apiVersion": "x.io/v1", "kind": "XR", "metadata": {"name": "xr", "labels": {"a": "b"}}, "spec": {"s": 1}}),
        );
        let desired_xr = object(json!({
            "apiVersion": "other/v1", "metadata": {"name": "other", "namespace": "gone"},
            "status": {"ok": true, "conditions": [
                {"type": "Custom", "status": "True", "reason": "Old", "lastTransitionTime": "2023-05-06T09:08:07.5+02:00", "extra": 1},
                {"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2020-01-01T00:00:00Z"}
            ]}
        }));
        let desired = State {
            composite: Some(Resource {
                resource: Some(Struct::from(desired_xr)),
                ..Default::default()
            }),
            ..Default::default()
        };
        let conditions = [
            Condition {
                r#type: "Custom".into(),
                status: Status::ConditionFalse as i32,
                reason: "New".into(),
                message: Some("m".into()),
                target: None,
            },
            Condition {
                r#type: "Synced".into(),
                status: Status::ConditionFalse as i32,
                ..Default::default()
            },
            Condition {
                r#type: "Other".into(),
                status: Status::ConditionUnspecified as i32,
                reason: "R".into(),
                ..Default::default()
            },
        ];
        let xr = composite(&input, &desired, &conditions);
        assert_eq!(xr["apiVersion"], "x.io/v1");
        assert_eq!(xr["kind"], "XR");
        assert_eq!(xr["metadata"], json!({"name": "xr"}));
        assert_eq!(xr["status"]["ok"], true);
        assert_eq!(
            conditions_of(&xr),
            json!([
                {"type": "Custom", "status": "False", "reason": "New", "message": "m", "lastTransitionTime": CONDITION_TIME},
                // Equal apart from the time: kept with its own time.
                {"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2020-01-01T00:00:00Z"},
                {"type": "Other", "status": "Unknown", "reason": "R", "lastTransitionTime": CONDITION_TIME},
            ])
        );
        assert!(xr.get("spec").is_none());
    }

    #[test]
    fn condition_times_are_normalised_to_utc_seconds() {
        assert_eq!(
            rfc3339_utc("2023-05-06T09:08:07.5+02:00").as_deref(),
            Some("2023-05-06T07:08:07Z")
        );
        assert_eq!(
            rfc3339_utc("2024-01-01T00:30:00-01:00").as_deref(),
            Some("2024-01-01T01:30:00Z")
        );
        assert_eq!(
            rfc3339_utc("2024-03-01T00:30:00+01:00").as_deref(),
            Some("2024-02-29T23:30:00Z")
        );
        assert_eq!(
            rfc3339_utc("2024-01-01T00:00:00Z").as_deref(),
            Some("2024-01-01T00:00:00Z")
        );
        assert_eq!(rfc3339_utc("2024-01-01"), None);
        assert_eq!(rfc3339_utc("2024-02-30T00:00:00Z"), None);
        let xr = object(
            json!({"status": {"conditions": [{"type": "A", "lastTransitionTime": "garbage"}]}}),
        );
        assert_eq!(
            read_conditions(&xr)[0].to_json()["lastTransitionTime"],
            Value::Null
        );
    }

    #[test]
    fn include_full_xr_needs_a_spec() {
        let mut xr = Object::new();
        let error = copy_spec_and_metadata(&object(json!({"metadata": {}})), &mut xr).unwrap_err();
        assert_eq!(
            format!("{error:#}"),
            "cannot get composite resource spec: spec: no such field"
        );
    }
}
