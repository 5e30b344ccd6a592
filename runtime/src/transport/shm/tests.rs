//! `ShmNode::establish` end to end inside one process: one thread per rank,
//! over an in-memory bootstrap (a shared KV map and a barrier as the fence).

use std::collections::HashMap;
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use super::setup::check_header;
use super::*;
use crate::bootstrap::JobInfo;
use layout::{MAGIC, VERSION};
use std::sync::atomic::Ordering::{Relaxed, Release};

#[derive(Debug)]
struct FakeBoot {
    info: JobInfo,
    kv: Arc<Mutex<HashMap<String, String>>>,
    fence: Arc<Barrier>,
}

impl Bootstrap for FakeBoot {
    fn info(&self) -> &JobInfo {
        &self.info
    }
    fn put(&mut self, key: &str, value: &str) -> Result<(), Error> {
        self.kv.lock().unwrap().insert(key.into(), value.into());
        Ok(())
    }
    fn fence(&mut self) -> Result<(), Error> {
        self.fence.wait();
        Ok(())
    }
    fn get(&mut self, key: &str) -> Result<Option<String>, Error> {
        Ok(self.kv.lock().unwrap().get(key).cloned())
    }
    fn finalize(&mut self) -> Result<(), Error> {
        Ok(())
    }
    fn abort(&mut self, _code: i32, _message: &str) -> Result<(), Error> {
        Ok(())
    }
}

fn cfg(memfd: bool) -> ShmConfig {
    ShmConfig {
        cell_size: 256,
        ring_cells: 8,
        memfd,
        cma: true,
        ptracer_any: false,
    }
}

/// Runs `body` as every rank of a job whose ranks sit on nodes `nodes`.
fn job<T: Send + 'static>(
    jobid: &str,
    nodes: &[usize],
    cfgs: impl Fn(usize) -> ShmConfig,
    body: impl Fn(Result<ShmNode, Error>) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let kv = Arc::new(Mutex::new(HashMap::new()));
    let fence = Arc::new(Barrier::new(nodes.len()));
    let body = Arc::new(body);
    let threads: Vec<_> = (0..nodes.len())
        .map(|rank| {
            let mut boot = FakeBoot {
                info: JobInfo {
                    rank,
                    size: nodes.len(),
                    appnum: 0,
                    jobid: jobid.into(),
                    universe_size: None,
                    node_of_rank: nodes.to_vec(),
                },
                kv: Arc::clone(&kv),
                fence: Arc::clone(&fence),
            };
            let (cfg, body) = (cfgs(rank), Arc::clone(&body));
            std::thread::spawn(move || body(ShmNode::establish(&mut boot, &cfg)))
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

/// Every local rank sends `count` numbered messages to every other one.
fn all_to_all(node: &ShmNode, count: u32) {
    let (me, n) = (node.local_rank(), node.local_size());
    let mut sent = vec![0u32; n];
    let mut got = vec![0u32; n];
    let done = |sent: &[u32], got: &[u32]| {
        (0..n).all(|p| p == me || (sent[p] == count && got[p] == count))
    };
    while !done(&sent, &got) {
        let seen = node.doorbell(me).current();
        let mut progress = false;
        for p in (0..n).filter(|&p| p != me) {
            if sent[p] < count
                && node
                    .sender(p)
                    .try_push(me as u32, &[&sent[p].to_le_bytes()])
            {
                sent[p] += 1;
                node.doorbell(p).ring();
                progress = true;
            }
            while let Some(v) = node.receiver(p).try_pop(|flags, b| {
                assert_eq!(flags as usize, p);
                u32::from_le_bytes(b.try_into().unwrap())
            }) {
                assert_eq!(v, got[p], "message order from local rank {p}");
                got[p] += 1;
                progress = true;
            }
        }
        if !progress {
            node.doorbell(me)
                .wait(seen, Some(Duration::from_millis(20)));
        }
    }
}

#[test]
fn four_ranks_on_two_nodes_exchange_messages() {
    for memfd in [true, false] {
        let jobid = format!("unit{}", std::process::id());
        let out = job(
            &jobid,
            &[0, 1, 0, 1],
            move |_| cfg(memfd),
            |node| {
                let node = node.expect("establish");
                assert_eq!((node.local_size(), node.layout().cells()), (2, 8));
                all_to_all(&node, 5000);
                let me = node.local_rank();
                assert_eq!(node.peer_pid(1 - me), std::process::id() as i32);
                (
                    node.ranks().to_vec(),
                    node.cma_enabled(),
                    node.backing().clone(),
                )
            },
        );
        assert_eq!(out[0].0, vec![0, 2]);
        assert_eq!(out[3].0, vec![1, 3]);
        assert!(out.iter().all(|o| o.1), "CMA on self-pid peers must work");
        for (_, _, backing) in &out {
            match backing {
                Backing::File(name) => {
                    assert!(!memfd);
                    let path = std::path::Path::new(segment::SHM_DIR).join(name);
                    assert!(!path.exists(), "{name} still exists after establish");
                }
                Backing::Memfd => assert!(memfd),
            }
        }
    }
}

#[test]
fn a_rank_alone_on_its_node_gets_a_ring_less_node() {
    let out = job(
        "solo",
        &[0],
        |_| cfg(true),
        |node| {
            let node = node.unwrap();
            (node.local_size(), node.cma_enabled())
        },
    );
    assert_eq!(out, vec![(1, false)]);
}

#[test]
fn mismatched_settings_fail_on_every_rank_without_hanging() {
    let out = job(
        "mismatch",
        &[0, 0, 0],
        |r| ShmConfig {
            cell_size: if r == 2 { 512 } else { 256 },
            ..cfg(true)
        },
        |node| node.map(drop).map_err(|e| e.to_string()),
    );
    let e2 = out[2].as_ref().unwrap_err();
    assert!(e2.contains("bytes, this rank expects"), "{e2}");
    let e0 = out[0].as_ref().unwrap_err();
    assert!(e0.contains("2 of 3 local ranks attached"), "{e0}");
    let out = job(
        "badcfg",
        &[0, 0],
        |_| ShmConfig {
            cell_size: 1,
            ..cfg(true)
        },
        |node| node.map(drop).map_err(|e| e.to_string()),
    );
    assert!(out
        .iter()
        .all(|r| r.as_ref().unwrap_err().contains("OXMPI_SHM_CELL_SIZE=1")));
}

#[test]
fn header_check_names_what_differs() {
    let layout = Layout::new(2, 256, 8).unwrap();
    let map = Mapping::anonymous(layout.segment_len()).unwrap();
    let h = map.at::<Header>(0);
    let e = check_header(h, &layout).unwrap_err().to_string();
    assert!(e.contains("not an OxMPI segment"), "{e}");
    h.magic.store(MAGIC, Release);
    h.version.store(VERSION, Relaxed);
    h.local_size.store(3, Relaxed);
    let e = check_header(h, &layout).unwrap_err().to_string();
    assert!(
        e.contains(&format!("({VERSION}, 3, 0, 0)"))
            && e.contains(&format!("({VERSION}, 2, 256, 8)")),
        "{e}"
    );
}
