//! `--xrd`: the composite resource as the API server would store it. The
//! defaults of the XRD's schema (for the XR's version) are applied to the XR,
//! and the XR's `spec` is validated against the schema, before the pipeline
//! runs; a violation stops render with every problem listed.
//!
//! The fields Crossplane adds to every XR's spec (`crossplane`, `claimRef`,
//! `compositionRef`, ...) are not in the XRD's schema (Crossplane adds them
//! to the CRD it derives), so they are left out of the validation.

use super::load::{str_at, Object};
use super::Result;
use crate::core::composite::CROSSPLANE_SPEC_FIELDS;
use crate::core::validation::openapi::{apply_defaults, CompiledSchema};
use anyhow::{Context as _, Error};
use serde_json::{json, Value};

/// Applies the XRD's defaults to `xr` and validates its spec.
pub(super) fn apply(xr: &mut Object, xrd: &Object) -> Result<()> {
    let name = str_at(xr, &["metadata", "name"]).to_owned();
    let schema = version_schema(xr, xrd)
        .with_context(|| format!("cannot default values for XR {name:?}"))?;
    let mut value = Value::Object(std::mem::take(xr));
    apply_defaults(&mut value, &schema);
    if let Value::Object(object) = value {
        *xr = object;
    }
    let mut spec = xr.get("spec").cloned().unwrap_or_else(|| json!({}));
    if let Some(fields) = spec.as_object_mut() {
        fields.retain(|field, _| !CROSSPLANE_SPEC_FIELDS.contains(&field.as_str()));
    }
    let spec_schema = json!({
        "type": "object",
        "properties": {"spec": schema["properties"]["spec"].clone()},
    });
    let violations = CompiledSchema::new(spec_schema).validate(&json!({ "spec": spec }));
    if violations.is_empty() {
        return Ok(());
    }
    Err(Error::msg(violations.join("; ")).context(format!(
        "XR {name:?} is invalid against XRD {:?}",
        str_at(xrd, &["metadata", "name"])
    )))
}

/// The `openAPIV3Schema` of the XRD's version that the XR's apiVersion names.
fn version_schema(xr: &Object, xrd: &Object) -> Result<Value> {
    let xrd_name = str_at(xrd, &["metadata", "name"]);
    if str_at(xrd, &["kind"]) != "CompositeResourceDefinition" {
        return Err(Error::msg(format!(
            "{:?} is a {}, not a CompositeResourceDefinition",
            xrd_name,
            str_at(xrd, &["kind"])
        )));
    }
    let (group, version) = str_at(xr, &["apiVersion"])
        .split_once('/')
        .unwrap_or(("", str_at(xr, &["apiVersion"])));
    let kind = str_at(xr, &["kind"]);
    let (xrd_group, xrd_kind) = (
        str_at(xrd, &["spec", "group"]),
        str_at(xrd, &["spec", "names", "kind"]),
    );
    if (xrd_group, xrd_kind) != (group, kind) {
        return Err(Error::msg(format!(
            "XRD {xrd_name:?} defines {xrd_kind} of group {xrd_group}, not the XR's {kind} of group {group}"
        )));
    }
    let versions = xrd
        .get("spec")
        .and_then(|s| s.get("versions"))
        .and_then(Value::as_array);
    let found = versions
        .into_iter()
        .flatten()
        .find(|v| v["name"] == version)
        .ok_or_else(|| {
            Error::msg(format!(
                "XRD {xrd_name:?} has no version {version:?} (the XR's apiVersion)"
            ))
        })?;
    let schema = &found["schema"]["openAPIV3Schema"];
    if !schema.is_object() {
        return Err(Error::msg(format!(
            "version {version:?} of XRD {xrd_name:?} has no schema.openAPIV3Schema"
        )));
    }
    Ok(schema.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> Object {
        value.as_object().unwrap().clone()
    }

    fn xrd() -> Object {
        object(json!({
            "apiVersion": "apiextensions.crossplane.io/v2", "kind": "CompositeResourceDefinition",
            "metadata": {"name": "xthings.example.org"},
            "spec": {"group": "example.org", "names": {"kind": "XThing"}, "versions": [{
                "name": "v1",
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object",
                    "properties": {
                        "size": {"type": "integer", "default": 3},
                        "tier": {"type": "string", "enum": ["gold", "silver"]}
                    }
                }}}}
            }]}
        }))
    }

    fn xr(spec: Value) -> Object {
        object(json!({
            "apiVersion": "example.org/v1", "kind": "XThing",
            "metadata": {"name": "a"}, "spec": spec
        }))
    }

    #[test]
    fn defaults_are_applied_and_crossplane_fields_kept() {
        let mut xr = xr(json!({"tier": "gold", "compositionRef": {"name": "c"}}));
        apply(&mut xr, &xrd()).unwrap();
        assert_eq!(
            xr["spec"],
            json!({"size": 3, "tier": "gold", "compositionRef": {"name": "c"}})
        );
    }

    #[test]
    fn violations_are_listed() {
        let mut xr = xr(json!({"tier": "bronze", "colour": "red"}));
        let error = format!("{:#}", apply(&mut xr, &xrd()).unwrap_err());
        assert!(
            error.starts_with("XR \"a\" is invalid against XRD \"xthings.example.org\": "),
            "{error}"
        );
        assert!(error.contains("spec.tier"), "{error}");
        assert!(error.contains("spec.colour"), "{error}");
    }

    #[test]
    fn the_xr_must_be_of_the_xrd() {
        let mut other = xr(json!({}));
        other.insert("apiVersion".into(), json!("example.org/v2"));
        assert_eq!(
            format!("{:#}", apply(&mut other, &xrd()).unwrap_err()),
            "cannot default values for XR \"a\": XRD \"xthings.example.org\" has no version \"v2\" (the XR's apiVersion)"
        );
        other.insert("kind".into(), json!("XOther"));
        assert_eq!(
            format!("{:#}", apply(&mut other, &xrd()).unwrap_err()),
            "cannot default values for XR \"a\": XRD \"xthings.example.org\" defines XThing of group example.org, not the XR's XOther of group example.org"
        );
    }
}
