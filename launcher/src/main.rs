//! `oxrun`: the OxMPI launcher and PMI server (also installed as `mpirun`
//! and `mpiexec`). See `oxrun --help`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(oxmpi_launcher::run_from_args(&args));
}
