//! What both reports share: the header, the note on a shared machine and
//! the table of jobs.

use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use oxmpi_benches::format::{micros, pct};
use oxmpi_benches::machine::SLOW;
use oxmpi_benches::peers::{tree_state, QUIET};
use oxmpi_benches::report::{host_cpu, utc_timestamp};

use crate::results::Job;
use crate::{Options, Setup, MAX_RUNS};

/// Microseconds with two decimals below 10.
pub fn us(v: Option<f64>) -> String {
    micros(v, 2)
}

pub fn header(o: &Options, setup: &Setup, timeout: Duration, title: &str, what: &str) -> String {
    let [ox, mpich, ompi] = setup.launch.versions();
    let mut flags = String::new();
    if o.quick {
        flags += " --quick";
    }
    if o.model {
        flags += " --model";
    }
    let ranks: Vec<String> = o.ranks.iter().map(u32::to_string).collect();
    format!(
        "# {title}\n\n{what}\n\n\
         - date: {}\n- host: {}\n- tree: {}\n- oxrun: {ox}\n- MPICH: {mpich}\n\
         - Open MPI: {ompi}\n\
         - command: `cargo run --release -p oxmpi-benches --bin coll --{flags} --ranks {}`\n\
         - every job under a {:.0} s hard timeout; {} (see `coll_bench.rs`)\n\
         - launch: OxMPI `oxrun -n N` (binds each rank to a core; oversubscribed, \
         round-robin over the cores when they share the ranks evenly) with \
         `OXMPI_DEBUG=coll`; MPICH `UCX_TLS=self,sm \
         mpiexec.hydra -n N` plus `-bind-to core` when N ≤ {} cores; Open MPI \
         `mpirun.openmpi --allow-run-as-root --oversubscribe -n N`\n",
        utc_timestamp(SystemTime::now()),
        host_cpu(),
        tree_state(),
        ranks.join(","),
        timeout.as_secs_f64(),
        if o.quick {
            "quick: 7 rounds of about 3 ms (at least one call) per size, time = the fastest round"
        } else {
            "15 rounds of about 10 ms (at least one call) per size, time = the fastest round"
        },
        setup.launch.cores,
    )
}

pub fn shared_machine_note(out: &mut String, jobs: &[Job]) {
    let loads: Vec<f64> = jobs.iter().filter_map(|j| j.run.load_before).collect();
    let busy = loads.iter().filter(|&&b| b >= QUIET).count();
    let worst = loads.iter().copied().fold(0.0, f64::max);
    if busy > 0 {
        let _ = writeln!(
            out,
            "**Shared machine:** {busy} of {} jobs started with other programs keeping at \
             least {:.0}% of the CPUs busy (worst {}); their figures are disturbed.\n",
            jobs.len(),
            QUIET * 100.0,
            pct(Some(worst))
        );
    }
}

pub fn jobs_table(out: &mut String, jobs: &[Job], settle: Duration) {
    let _ = writeln!(
        out,
        "## Jobs\n\nOthers' load: share of all CPUs busy over 0.3 s just before the job, \
         with none of ours running (each job waited up to {:.0} s for it to drop below \
         {:.0}%). Machine: half a round trip of one cache line between two cores, \
         measured just before the job without MPI; a comparison job whose figure \
         exceeded {SLOW}× the best seen ran again (at most {MAX_RUNS} runs), keeping \
         the run that saw the fastest machine.\n\n\
         | command | status | wall s | others' load | machine ns | runs |\n\
         |---|---|--:|--:|--:|--:|",
        settle.as_secs_f64(),
        QUIET * 100.0
    );
    for j in jobs {
        let _ = writeln!(
            out,
            "| `{}` | {} | {:.1} | {} | {} | {} |",
            j.run.command,
            j.note().unwrap_or_else(|| "ok".into()),
            j.run.elapsed.as_secs_f64(),
            pct(j.run.load_before),
            j.run.machine_cell(),
            j.runs
        );
    }
    out.push('\n');
}
