use super::*;

/// Every length the word comparisons take, and around them: equal strings are equal, and a
/// difference at any one place (the parts the two words overlap included) is seen.
#[test]
fn same_length_equal_is_byte_equality() {
    for len in 0..=20 {
        let name: Vec<u8> = (0..len).map(|i| b'a' + i as u8).collect();
        assert!(same_length_equal(&name, &name.clone()), "length {len}");
        for at in 0..len {
            let mut other = name.clone();
            other[at] ^= 0x20;
            assert!(!same_length_equal(&name, &other), "length {len}, at {at}");
        }
    }
}

#[test]
fn every_api_has_kinds_and_valid_nodes() {
    let catalog = catalog();
    for api in ProviderApi::ALL {
        assert!(catalog.kinds(api).count() > 90, "{api}");
    }
    for kind in catalog.all_kinds() {
        assert!(catalog.for_provider(kind).is_some(), "{}", kind.kind);
    }
}

#[test]
fn aliases_resolve_only_where_needed() {
    let catalog = catalog();
    let local_docker = catalog
        .find(ProviderApi::Cluster, Rclass::Local, "docker")
        .unwrap();
    assert_eq!(local_docker.package_type, "dockerv2");
    let federated_docker = catalog
        .find(ProviderApi::Cluster, Rclass::Federated, "docker")
        .unwrap();
    assert_eq!(federated_docker.package_type, "docker");
    let flat = catalog
        .find(ProviderApi::Flat, Rclass::Local, "Docker-V2")
        .unwrap();
    assert_eq!(flat.kind, "LocalDockerV2Repository");
    let missing = catalog
        .find(ProviderApi::Flat, Rclass::Local, "go")
        .unwrap_err();
    assert!(missing.contains(&"maven") && !missing.contains(&"go"));
}
