//! The PMI spawn request, in both wire forms (client and launcher share it).
//!
//! PMI-1 (MPICH's simple PMI) sends one multi-line `mcmd=spawn` segment per
//! command, each line `key=value`, ending with `endcmd`:
//!
//! ```text
//! mcmd=spawn
//! nprocs=2
//! execname=prog
//! totspawns=1
//! spawnssofar=1
//! argcnt=1
//! arg1=-v
//! preput_num=1
//! preput_key_0=K
//! preput_val_0=V
//! info_num=1
//! info_key_0=wdir
//! info_val_0=/tmp
//! endcmd
//! ```
//!
//! and the server answers `cmd=spawn_result rc=0` after the last segment.
//! PMI-2 sends one `spawn` command whose per-command keys repeat in order:
//! `ncmds`, `preputcount`, `ppkeyI`, `ppvalI`, then per command `subcmd`,
//! `maxprocs`, `argc`, `argvJ`, `infokeycount`, `infokeyJ`, `infovalJ`;
//! the answer is `spawn-response` with `rc`.

use super::wire::{Command, WireError};

/// The key a launcher that serves spawn requests answers (with `1`) in
/// its key-value space: oxrun does; hydra and Slurm do not, and their
/// spawns would start processes that cannot find their parents, so the
/// runtime asks first.
pub const SPAWN_KEY: &str = "oxmpi-spawn";

/// One command of a spawn: `maxprocs` copies of `program args...`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SpawnCmd {
    /// Program (a path, or a name looked up in `PATH`).
    pub program: String,
    /// Its arguments (without the program).
    pub args: Vec<String>,
    /// Processes to start.
    pub maxprocs: u32,
    /// Info keys (`host`, `wdir`, `path`, `soft`, ...).
    pub info: Vec<(String, String)>,
}

/// A whole spawn request (`MPI_Comm_spawn` has one command,
/// `MPI_Comm_spawn_multiple` several, all in one new job).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SpawnRequest {
    /// The commands, in rank order of the new job.
    pub cmds: Vec<SpawnCmd>,
    /// Key-value pairs the new job sees (here: in its environment).
    pub preput: Vec<(String, String)>,
}

fn bad(what: String) -> WireError {
    WireError::Malformed(what)
}

fn int(cmd: &Command, key: &str, value: &str) -> Result<u32, WireError> {
    value.trim().parse().map_err(|_| {
        bad(format!(
            "spawn ({}): {key}={value:?} is not a count",
            cmd.name
        ))
    })
}

impl SpawnRequest {
    /// The PMI-2 `spawn` command.
    pub fn to_pmi2(&self) -> Command {
        let mut c = Command::new("spawn")
            .with("ncmds", self.cmds.len())
            .with("preputcount", self.preput.len());
        for (i, (k, v)) in self.preput.iter().enumerate() {
            c = c.with(format!("ppkey{i}"), k).with(format!("ppval{i}"), v);
        }
        for cmd in &self.cmds {
            c = c
                .with("subcmd", &cmd.program)
                .with("maxprocs", cmd.maxprocs)
                .with("argc", cmd.args.len());
            for (j, a) in cmd.args.iter().enumerate() {
                c = c.with(format!("argv{j}"), a);
            }
            c = c.with("infokeycount", cmd.info.len());
            for (j, (k, v)) in cmd.info.iter().enumerate() {
                c = c
                    .with(format!("infokey{j}"), k)
                    .with(format!("infoval{j}"), v);
            }
        }
        c
    }

    /// Reads a PMI-2 `spawn` command.
    pub fn from_pmi2(c: &Command) -> Result<SpawnRequest, WireError> {
        let mut req = SpawnRequest::default();
        let mut it = c.pairs.iter();
        let mut next = |want: &str| -> Result<&str, WireError> {
            match it.next() {
                Some((k, v)) if k == want => Ok(v.as_str()),
                Some((k, _)) => Err(bad(format!("spawn: expected {want}=, found {k}="))),
                None => Err(bad(format!("spawn: missing {want}="))),
            }
        };
        let ncmds = int(c, "ncmds", next("ncmds")?)?;
        let npre = int(c, "preputcount", next("preputcount")?)?;
        for i in 0..npre {
            let k = next(&format!("ppkey{i}"))?.to_string();
            let v = next(&format!("ppval{i}"))?.to_string();
            req.preput.push((k, v));
        }
        for _ in 0..ncmds {
            let mut cmd = SpawnCmd {
                program: next("subcmd")?.to_string(),
                ..SpawnCmd::default()
            };
            cmd.maxprocs = int(c, "maxprocs", next("maxprocs")?)?;
            let argc = int(c, "argc", next("argc")?)?;
            for j in 0..argc {
                cmd.args.push(next(&format!("argv{j}"))?.to_string());
            }
            let ninfo = int(c, "infokeycount", next("infokeycount")?)?;
            for j in 0..ninfo {
                let k = next(&format!("infokey{j}"))?.to_string();
                let v = next(&format!("infoval{j}"))?.to_string();
                cmd.info.push((k, v));
            }
            req.cmds.push(cmd);
        }
        Ok(req)
    }

    /// The PMI-1 `mcmd=spawn` segments, one per command, each ending in
    /// `endcmd\n`. Values may not contain a newline.
    pub fn to_pmi1(&self) -> Result<Vec<u8>, WireError> {
        fn line(out: &mut String, k: &str, v: &str) -> Result<(), WireError> {
            if v.contains('\n') {
                return Err(bad(format!("spawn: {k}={v:?} holds a newline")));
            }
            out.push_str(&format!("{k}={v}\n"));
            Ok(())
        }
        let mut out = String::new();
        let total = self.cmds.len();
        for (i, cmd) in self.cmds.iter().enumerate() {
            let o = &mut out;
            line(o, "mcmd", "spawn")?;
            line(o, "nprocs", &cmd.maxprocs.to_string())?;
            line(o, "execname", &cmd.program)?;
            line(o, "totspawns", &total.to_string())?;
            line(o, "spawnssofar", &(i + 1).to_string())?;
            line(o, "argcnt", &cmd.args.len().to_string())?;
            for (j, a) in cmd.args.iter().enumerate() {
                line(o, &format!("arg{}", j + 1), a)?;
            }
            line(o, "preput_num", &self.preput.len().to_string())?;
            for (j, (k, v)) in self.preput.iter().enumerate() {
                line(o, &format!("preput_key_{j}"), k)?;
                line(o, &format!("preput_val_{j}"), v)?;
            }
            line(o, "info_num", &cmd.info.len().to_string())?;
            for (j, (k, v)) in cmd.info.iter().enumerate() {
                line(o, &format!("info_key_{j}"), k)?;
                line(o, &format!("info_val_{j}"), v)?;
            }
            o.push_str("endcmd\n");
        }
        Ok(out.into_bytes())
    }

    /// Adds one PMI-1 segment (a `spawn` command read by the multi-line
    /// reader); returns `(spawnssofar, totspawns)`.
    pub fn add_pmi1_segment(&mut self, c: &Command) -> Result<(u32, u32), WireError> {
        let get = |k: &str| c.require(k);
        let num = |k: &str| -> Result<u32, WireError> { int(c, k, c.require(k)?) };
        let mut cmd = SpawnCmd {
            program: get("execname")?.to_string(),
            maxprocs: num("nprocs")?,
            ..SpawnCmd::default()
        };
        for j in 1..=num("argcnt")? {
            cmd.args.push(get(&format!("arg{j}"))?.to_string());
        }
        for j in 0..num("info_num")? {
            cmd.info.push((
                get(&format!("info_key_{j}"))?.to_string(),
                get(&format!("info_val_{j}"))?.to_string(),
            ));
        }
        let mut preput = Vec::new();
        for j in 0..num("preput_num")? {
            preput.push((
                get(&format!("preput_key_{j}"))?.to_string(),
                get(&format!("preput_val_{j}"))?.to_string(),
            ));
        }
        self.preput = preput;
        self.cmds.push(cmd);
        Ok((num("spawnssofar")?, num("totspawns")?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::wire::{framed, FrameReader, Framing};

    fn sample() -> SpawnRequest {
        SpawnRequest {
            cmds: vec![
                SpawnCmd {
                    program: "./a".into(),
                    args: vec!["-x".into(), "two words".into()],
                    maxprocs: 2,
                    info: vec![("wdir".into(), "/tmp".into())],
                },
                SpawnCmd {
                    program: "b".into(),
                    args: vec![],
                    maxprocs: 1,
                    info: vec![],
                },
            ],
            preput: vec![("OXMPI_PARENT".into(), "x|1".into())],
        }
    }

    #[test]
    fn both_forms_round_trip() {
        let req = sample();
        let c = req.to_pmi2();
        let bytes = framed::encode(&c).unwrap();
        let back = framed::decode(&bytes[6..]).unwrap();
        assert_eq!(SpawnRequest::from_pmi2(&back).unwrap(), req);

        let mut reader = FrameReader::new();
        reader.push(b"cmd=init pmi_version=1 pmi_subversion=1\n");
        reader.next_command().unwrap().unwrap();
        assert_eq!(reader.framing(), Framing::Line);
        reader.push(&req.to_pmi1().unwrap());
        let mut got = SpawnRequest::default();
        let (mut so_far, mut total) = (0, 1);
        while so_far < total {
            let seg = reader.next_command().unwrap().expect("a whole segment");
            assert_eq!(seg.name, "spawn");
            (so_far, total) = got.add_pmi1_segment(&seg).unwrap();
        }
        assert_eq!(got, req);
        assert!(reader.next_command().unwrap().is_none());
    }

    #[test]
    fn malformed_requests_name_the_key() {
        let c = Command::new("spawn")
            .with("ncmds", 1)
            .with("preputcount", "x");
        let e = SpawnRequest::from_pmi2(&c).unwrap_err().to_string();
        assert!(e.contains("preputcount"), "{e}");
        let c = Command::new("spawn")
            .with("ncmds", 1)
            .with("preputcount", 0);
        let e = SpawnRequest::from_pmi2(&c).unwrap_err().to_string();
        assert!(e.contains("subcmd"), "{e}");
    }
}
