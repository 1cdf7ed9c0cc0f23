//! Claims from the mapped repositories: grouped by project and size, named, virtuals wired to
//! the members the claim holds.

use super::*;

/// The repositories of one claim.
pub(super) struct Group {
    pub(super) name: String,
    pub(super) project: Option<String>,
    pub(super) repositories: Vec<Mapped>,
}

/// Splits the repositories (sorted by project) into claims: by project when asked, and by size.
pub(super) fn groups(mapped: Vec<Mapped>, options: &Options) -> Vec<Group> {
    let mut by_project: Vec<(Option<String>, Vec<Mapped>)> = Vec::new();
    for repository in mapped {
        let project = options
            .group_by_project
            .then(|| repository.project.clone())
            .flatten();
        match by_project.last_mut() {
            Some((last, list)) if *last == project => list.push(repository),
            _ => by_project.push((project, vec![repository])),
        }
    }
    let per_claim = options.per_claim.max(1);
    let mut groups = Vec::new();
    for (project, repositories) in by_project {
        let base = match &project {
            Some(project) => dns_label(&format!("{}-{project}", options.name), ""),
            None => options.name.clone(),
        };
        let mut parts: Vec<Vec<Mapped>> = vec![Vec::new()];
        let mut bytes = 0;
        for repository in repositories {
            let size = Value::Object(repository.entry.clone()).to_string().len();
            let current = parts.last_mut().expect("one part at least");
            if !current.is_empty()
                && (current.len() >= per_claim || bytes + size > ENTRY_BYTES_PER_CLAIM)
            {
                parts.push(Vec::new());
                bytes = 0;
            }
            bytes += size;
            parts
                .last_mut()
                .expect("one part at least")
                .push(repository);
        }
        let several = parts.len() > 1;
        for (i, part) in parts.into_iter().enumerate() {
            let name = if several {
                dns_label(&base, &format!("-{}", i + 1))
            } else {
                base.clone()
            };
            groups.push(Group {
                name,
                project: project.clone(),
                repositories: part,
            });
        }
    }
    groups
}

/// The claim for one group of repositories.
pub(super) fn build_claim(
    repositories: &[Mapped],
    project: Option<&str>,
    name: &str,
    options: &Options,
    inventory: &mut Inventory,
) -> Value {
    let names = entry_names(repositories, project, name, options);
    let name_of: BTreeMap<&str, &str> = repositories
        .iter()
        .zip(&names)
        .map(|(r, (entry_name, _))| (r.key.as_str(), entry_name.as_str()))
        .collect();
    let mut entries = Vec::with_capacity(repositories.len());
    for (repository, (entry_name, explicit)) in repositories.iter().zip(&names) {
        let mut entry = Map::new();
        entry.insert("name".to_owned(), json!(entry_name));
        if *explicit {
            entry.insert("key".to_owned(), json!(repository.key));
            inventory.explicit_keys += 1;
        }
        entry.extend(repository.entry.clone());
        if project.is_none() {
            if let Some(project) = &repository.project {
                let for_provider = entry.entry("forProvider").or_insert_with(|| json!({}));
                for_provider["projectKey"] = json!(project);
            }
        }
        if repository.rclass == Rclass::Virtual {
            wire_virtual(repository, &name_of, &mut entry);
        }
        if repository.username {
            let secret = dns_label(&format!("{entry_name}-credentials"), "");
            entry.insert(
                "password".to_owned(),
                json!({"secretRef": {"name": secret, "key": "password"}}),
            );
            inventory.secrets.push(SecretNeeded {
                repository: repository.key.clone(),
                claim: name.to_owned(),
                name: secret,
                key: "password".to_owned(),
            });
        }
        *inventory.adopted.entry(repository.rclass).or_default() += 1;
        entries.push(Value::Object(entry));
    }
    let mut metadata = json!({"name": name});
    if let Some(namespace) = &options.namespace {
        metadata["namespace"] = json!(namespace);
    }
    let mut spec = Map::new();
    if let Some(project) = project {
        spec.insert("projectKey".to_owned(), json!(project));
    }
    spec.insert("repositories".to_owned(), Value::Array(entries));
    json!({
        "apiVersion": options.api_version,
        "kind": options.kind,
        "metadata": metadata,
        "spec": spec,
    })
}

/// A virtual's members in Artifactory's order: the leading members that are entries of this
/// claim by name, the rest by key in `externalRepositories` (the function writes
/// `repositories` then `externalRepositories`, so the order holds). The default deployment
/// repository by name where it is one of those members, else by key in `forProvider`.
pub(super) fn wire_virtual(
    repository: &Mapped,
    name_of: &BTreeMap<&str, &str>,
    entry: &mut Map<String, Value>,
) {
    let leading = repository
        .members
        .iter()
        .take_while(|key| name_of.contains_key(key.as_str()) && **key != repository.key)
        .count();
    let (named, external) = repository.members.split_at(leading);
    let named: Vec<&str> = named.iter().map(|key| name_of[key.as_str()]).collect();
    if !named.is_empty() {
        entry.insert("repositories".to_owned(), json!(named));
    }
    if !external.is_empty() {
        entry.insert("externalRepositories".to_owned(), json!(external));
    }
    if let Some(default) = &repository.default_deployment {
        let by_name = repository.members[..leading]
            .iter()
            .any(|key| key == default);
        if by_name {
            entry.insert(
                "defaultDeploymentRepo".to_owned(),
                json!(name_of[default.as_str()]),
            );
        } else {
            let for_provider = entry.entry("forProvider").or_insert_with(|| json!({}));
            for_provider["defaultDeploymentRepo"] = json!(default);
        }
    }
}

/// Each repository's entry name, and whether its key must be set explicitly: the name the
/// naming format gives the live key back from, where it is a DNS label used once; else a
/// label made from the key, and the key itself.
pub(super) fn entry_names(
    repositories: &[Mapped],
    project: Option<&str>,
    claim_name: &str,
    options: &Options,
) -> Vec<(String, bool)> {
    let format = options
        .naming_format
        .clone()
        .unwrap_or_else(|| default_format(project).to_owned());
    let mut derived: Vec<Option<String>> = repositories
        .iter()
        .map(|r| derive_name(&format, r, project, claim_name, options))
        .collect();
    // A name used twice is no name; and a repository whose key is set explicitly is named
    // after its key, so a derived name equal to such a key's label, and not its own key's,
    // gives way and its repository is named after its own key too (key `team1-docker-local`
    // is not named `docker-local` beside key `docker-local`), until none is left.
    let counts = |derived: &[Option<String>]| {
        let mut count: BTreeMap<String, usize> = BTreeMap::new();
        for name in derived.iter().flatten() {
            *count.entry(name.clone()).or_default() += 1;
        }
        count
    };
    loop {
        let count = counts(&derived);
        let key_labels: HashSet<String> = repositories
            .iter()
            .zip(&derived)
            .filter(|(_, d)| d.as_ref().is_none_or(|name| count[name] > 1))
            .map(|(r, _)| dns_label(&r.key, ""))
            .collect();
        let mut changed = false;
        for (repository, name) in repositories.iter().zip(&mut derived) {
            if name.as_ref().is_some_and(|n| {
                count[n] == 1 && key_labels.contains(n) && *n != dns_label(&repository.key, "")
            }) {
                *name = None;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let count = counts(&derived);
    let mut taken: BTreeSet<String> = derived
        .iter()
        .flatten()
        .filter(|name| count[*name] == 1)
        .cloned()
        .collect();
    repositories
        .iter()
        .zip(&derived)
        .map(|(repository, derived)| match derived {
            Some(name) if count[name] == 1 => (name.clone(), false),
            _ => {
                let base = dns_label(&repository.key, "");
                let mut name = base.clone();
                let mut n = 2;
                while taken.contains(&name) {
                    name = dns_label(&base, &format!("-{n}"));
                    n += 1;
                }
                taken.insert(name.clone());
                (name, true)
            }
        })
        .collect()
}

/// The name that `format` turns into the repository's key, if there is one: the format holds
/// `{name}` once and every other placeholder has a value known here.
pub(super) fn derive_name(
    format: &str,
    repository: &Mapped,
    project: Option<&str>,
    claim_name: &str,
    options: &Options,
) -> Option<String> {
    let (before, after) = format.split_once("{name}")?;
    let fill = |text: &str| -> Option<String> {
        let mut out = String::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let close = rest[open..].find('}')? + open;
            let value = match &rest[open + 1..close] {
                "packageType" => repository.kind.package_type.as_str(),
                "rclass" => repository.rclass.as_str(),
                "projectKey" => project?,
                // A claim (the cluster and flat APIs) has a name and a namespace, and its
                // composite is cluster-scoped with a generated name; the namespaced API's
                // composite is the object itself.
                "claimName" if options.api != ProviderApi::Namespaced => claim_name,
                "claimNamespace" if options.api != ProviderApi::Namespaced => {
                    options.namespace.as_deref()?
                }
                "xrName" if options.api == ProviderApi::Namespaced => claim_name,
                "namespace" if options.api == ProviderApi::Namespaced => {
                    options.namespace.as_deref()?
                }
                _ => return None,
            };
            out.push_str(value);
            rest = &rest[close + 1..];
        }
        out.push_str(rest);
        Some(out)
    };
    let (prefix, suffix) = (fill(before)?, fill(after)?);
    let name = repository
        .key
        .strip_prefix(prefix.as_str())?
        .strip_suffix(suffix.as_str())?;
    is_dns_label(name).then(|| name.to_owned())
}

/// `text` as a DNS label ending in `suffix`: lower case, other characters as '-', cut to fit.
pub(super) fn dns_label(text: &str, suffix: &str) -> String {
    let mut label: String = text
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '-'
            }
        })
        .collect();
    label.truncate(63usize.saturating_sub(suffix.len()));
    let mut label = label.trim_matches('-').to_owned();
    if label.is_empty() {
        label = "repository".to_owned();
    }
    label.push_str(suffix);
    label
}
