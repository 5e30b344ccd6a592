//! Derived datatypes and info objects through OxMPI's C ABI: the
//! self-checking C programs `tests/c_abi/datatype.c` and `info.c`, three
//! ways as in `c_abi.rs`:
//!
//! - built with OxMPI's `mpicc` and run under `oxrun`;
//! - built with MPICH's `mpicc.mpich` and run under `mpiexec.hydra` (the
//!   reference: the programs are right);
//! - those MPICH binaries run under `oxrun` on our `libmpi.so.12`.
//!
//! Each runs at 1..=4 ranks. Needs `cargo build --workspace --bins` first
//! and MPICH installed.

#[path = "c_abi_harness/mod.rs"]
mod harness;

use harness::*;

fn check_passes(name: &str, way: Way) {
    for ranks in 1..=MAX_RANKS {
        let out = run(name, way, ranks, &[]);
        let pass = format!("PASS {name}");
        assert!(
            out.success() && out.stdout.lines().filter(|l| l.trim_end() == pass).count() == 1,
            "{name} ({way:?}) with {ranks} ranks failed\n{}",
            out.describe()
        );
        assert!(
            !out.outlived,
            "{name}: processes outlived the launcher\n{}",
            out.describe()
        );
    }
}

macro_rules! three_ways {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                use super::*;

                #[test]
                fn built_with_our_mpicc() {
                    check_passes(stringify!($name), Way::Ours);
                }

                #[test]
                fn mpich_binary_on_oxmpi() {
                    check_passes(stringify!($name), Way::MpichBinary);
                }

                #[test]
                fn reference_under_hydra() {
                    check_passes(stringify!($name), Way::Hydra);
                }
            }
        )*
    };
}

three_ways!(datatype, info);
