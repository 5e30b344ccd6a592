//! The rank programs of the reliability suite.

/// Runs `role` as a rank (or, for `abort256`, as a singleton).
pub fn run(role: &str) {
    match role {
        "init" => {
            let universe = oxmpi::init().expect("init");
            let world = universe.world();
            for _ in 0..3 {
                world.barrier().expect("barrier");
            }
            universe.finalize().expect("finalize");
        }
        "abort256" => {
            let universe = oxmpi::init().expect("init");
            universe.abort(256, "abort with a code whose low 8 bits are 0");
        }
        other => panic!("unknown role {other}"),
    }
}
