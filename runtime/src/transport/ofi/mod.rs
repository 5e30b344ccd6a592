//! libfabric: a thin layer over the system library, through small C shims
//! (`shim.c`: provider discovery; `endpoint.c`: an RDM endpoint; built by
//! `runtime/build.rs`), layered `sys` -> `result` -> `endpoint` (safe
//! endpoint) -> `link` (the transport for peers on other hosts; `mr`: what
//! it registers), and the discovery functions here for `oxrun --info`.
//!
//! libfabric is not linked: `libfabric.so.1` is opened with dlopen the first
//! time something asks (an endpoint, [`providers`], [`library_version`]),
//! and stays open. A process that never asks never loads it (nor the
//! provider libraries it pulls in, whose initialisers slow start-up down).

mod endpoint;
pub(crate) mod link;
pub(crate) mod mr;
mod result;
mod sys;

use crate::Error;

/// The distinct provider names `fi_getinfo` reports on this host (e.g.
/// `tcp`, `shm`, `verbs`, or layered ones such as `tcp;ofi_rxm`), in the
/// order it first reports them. Empty when it finds no provider; an error
/// when libfabric was not compiled in, cannot be loaded, or `fi_getinfo`
/// fails otherwise. Loads libfabric on first use.
pub fn providers() -> Result<Vec<String>, Error> {
    let mut distinct: Vec<String> = Vec::new();
    for name in result::provider_names()? {
        if !name.is_empty() && !distinct.contains(&name) {
            distinct.push(name);
        }
    }
    Ok(distinct)
}

/// Which provider a job's endpoints between hosts open on, in words, given
/// `OXMPI_OFI_PROVIDER` (`configured`, empty when unset) and the providers
/// libfabric lists here (`found`, already narrowed by `FI_PROVIDER`): the
/// configured one, else `net` where listed, else libfabric's first.
pub fn provider_between_hosts(configured: &str, found: &[String]) -> String {
    let preferred = endpoint::PREFERRED_PROVIDER;
    if !configured.is_empty() {
        return format!("{configured} (OXMPI_OFI_PROVIDER)");
    }
    if found.iter().any(|p| p == preferred) {
        return format!("{preferred} (the default where listed; else libfabric's first)");
    }
    match found.first() {
        Some(first) => format!("{first} (libfabric's first: no {preferred} here)"),
        None => "none".into(),
    }
}

/// The loaded libfabric's version ("major.minor"); an error when libfabric
/// was not compiled in or cannot be loaded. Loads libfabric on first use.
pub fn library_version() -> Result<String, Error> {
    result::library_version()
}

/// The libfabric API version requested from `fi_getinfo` ("major.minor", the
/// version of the header built against); `None` when not compiled in. Does
/// not load libfabric.
pub fn api_version() -> Option<String> {
    result::api_version()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Set at build time to build without the system libraries on purpose;
    /// only then may libfabric be absent.
    fn deliberately_without_libfabric() -> bool {
        option_env!("OXMPI_NO_SYSTEM_LIBS").is_some()
    }

    #[test]
    fn providers_does_not_fail_here() {
        if deliberately_without_libfabric() {
            assert!(providers().is_err() && library_version().is_err());
            return;
        }
        let names = providers().expect("fi_getinfo");
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "duplicates in {names:?}");
        assert!(names.iter().all(|n| !n.is_empty()));
    }

    #[test]
    fn net_is_preferred_where_listed_and_a_named_provider_wins() {
        let found = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let both = found(&["tcp;ofi_rxm", "net", "shm"]);
        assert!(provider_between_hosts("", &both).starts_with("net "));
        assert!(provider_between_hosts("tcp", &both).starts_with("tcp (OXMPI_OFI_PROVIDER)"));
        let rxm = found(&["tcp;ofi_rxm", "shm"]);
        assert!(provider_between_hosts("", &rxm).starts_with("tcp;ofi_rxm (libfabric's first"));
        assert_eq!(provider_between_hosts("", &[]), "none");
        assert_eq!(endpoint::provider_candidates(None), [Some("net"), None]);
        assert_eq!(
            endpoint::provider_candidates(Some("verbs")),
            [Some("verbs")]
        );
    }

    #[test]
    fn versions_are_reported() {
        if deliberately_without_libfabric() {
            return;
        }
        let lib = library_version().expect("library version");
        let api = api_version().expect("api version");
        assert!(lib.starts_with("1."), "{lib}");
        assert!(api.starts_with("1."), "{api}");
    }
}
