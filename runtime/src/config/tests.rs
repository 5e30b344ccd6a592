use super::*;

fn env(
    pairs: &'static [(&'static str, &'static str)],
) -> impl Fn(&str) -> Result<Option<String>, ()> {
    move |name| {
        Ok(pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string()))
    }
}

#[test]
fn defaults_parse() {
    let cfg = Config::from_lookup(env(&[])).expect("defaults");
    assert_eq!(cfg.eager_limit, 64 * 1024);
    assert_eq!(cfg.shm_cell_size, 8 * 1024);
    assert_eq!(cfg.shm_ring_cells, 64);
    assert!(cfg.cma);
    assert!(cfg.debug.is_empty());
    assert_eq!(cfg.coll_nodes, 0, "collectives see the real node map");
    for entry in REGISTRY {
        check_text(entry, entry.default).unwrap_or_else(|e| panic!("{}: {e}", entry.env));
    }
}

#[test]
fn env_values_override() {
    let cfg = Config::from_lookup(env(&[
        ("OXMPI_EAGER_LIMIT", "1M"),
        ("OXMPI_SHM_CELL_SIZE", "4096"),
        ("OXMPI_CMA", "OFF"),
        ("OXMPI_DEBUG", "p2p, coll,p2p"),
        ("OXMPI_COLL_NODES", "3"),
    ]))
    .expect("valid");
    assert_eq!(cfg.coll_nodes, 3);
    assert_eq!(cfg.eager_limit, 1 << 20);
    assert_eq!(cfg.shm_cell_size, 4096);
    assert!(!cfg.cma);
    assert_eq!(cfg.debug, vec!["p2p".to_string(), "coll".to_string()]);
    assert!(cfg.debug_enabled("coll"));
    assert!(!cfg.debug_enabled("mem"));
}

#[test]
fn errors_name_the_variable_and_value() {
    let err = get_from(&EAGER_LIMIT, env(&[("OXMPI_EAGER_LIMIT", "lots")])).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("OXMPI_EAGER_LIMIT"), "{text}");
    assert!(text.contains("lots"), "{text}");

    let err = Config::from_lookup(env(&[("OXMPI_CMA", "maybe")])).unwrap_err();
    assert!(err.to_string().contains("OXMPI_CMA=\"maybe\""), "{err}");

    let err = get_from(&DEBUG, env(&[("OXMPI_DEBUG", "p2p,bogus")])).unwrap_err();
    assert!(err.to_string().contains("OXMPI_DEBUG"), "{err}");
    assert!(err.to_string().contains("bogus"), "{err}");

    let err = get_from(&CMA, |_: &str| Err(())).unwrap_err();
    assert_eq!(err, ConfigError::NotUnicode { env: "OXMPI_CMA" });
}

#[test]
fn byte_sizes() {
    let parse = |t: &str| usize::from_setting(t, Kind::Bytes);
    assert_eq!(parse("2k"), Ok(2048));
    assert_eq!(parse("2KiB"), Ok(2048));
    assert_eq!(parse(" 3 m "), Ok(3 << 20));
    assert_eq!(parse("1g"), Ok(1 << 30));
    assert!(parse("-1").is_err());
    assert!(parse("k").is_err());
    assert!(usize::from_setting("2k", Kind::Count).is_err());
    assert!(parse(&format!("{}g", usize::MAX)).is_err());
}

#[test]
fn registry_names_are_unique_and_prefixed() {
    for (i, a) in REGISTRY.iter().enumerate() {
        assert!(a.env.starts_with("OXMPI_"), "{}", a.env);
        for b in &REGISTRY[i + 1..] {
            assert_ne!(a.env, b.env);
            assert_ne!(a.name, b.name);
        }
    }
}

#[test]
fn listing_shows_every_entry() {
    let text = listing().to_string();
    for entry in REGISTRY {
        assert!(text.contains(entry.env), "{text}");
        assert!(text.contains(entry.doc), "{text}");
    }
}
