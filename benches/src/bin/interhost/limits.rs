//! What the link allows without MPI: raw TCP (a spinning ping-pong over
//! one socket, this binary as both ends) and libfabric's own `fi_pingpong`
//! (package libfabric-bin), each between the two test hosts, ping-pong
//! half round trips at the latency sizes.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use oxmpi_benches::peers::on_path;
use oxmpi_tests::hosts::TestHosts;

use super::LAT_SIZES;

const TCP_PORT: u16 = 47123;
/// fi_pingpong's control ports: one per run (a server just gone may hold
/// its port a while).
const FI_PORT_BASE: u16 = 47600;
/// Seconds one fi_pingpong run may take.
const FI_LIMIT_S: u32 = 60;

/// Raw TCP between the hosts: half round trip at each latency size (us).
pub fn tcp(hosts: &TestHosts) -> Result<Vec<Option<f64>>, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let launch = hosts.launch_command();
    let names = hosts.names();
    let mut server = Command::new(launch)
        .arg(&names[1])
        .arg(&me)
        .arg("--tcp-server")
        .spawn()
        .map_err(|e| e.to_string())?;
    std::thread::sleep(Duration::from_millis(300));
    let peer = hosts.addr(1).to_string();
    let out = Command::new(launch)
        .arg(&names[0])
        .arg(&me)
        .args(["--tcp-client", &peer])
        .output()
        .map_err(|e| e.to_string())?;
    let _ = server.kill();
    let _ = server.wait();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut v: Vec<Option<f64>> = text.split_whitespace().map(|f| f.parse().ok()).collect();
    v.resize(LAT_SIZES.len(), None);
    Ok(v)
}

/// Echoes every message back (one connection).
pub fn tcp_server() -> Result<(), String> {
    let l = TcpListener::bind(("0.0.0.0", TCP_PORT)).map_err(|e| e.to_string())?;
    let (mut s, _) = l.accept().map_err(|e| e.to_string())?;
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    s.set_nonblocking(true).map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; 8 + largest()];
    loop {
        if spin_read(&mut s, &mut buf[..8]).is_err() {
            return Ok(());
        }
        let n = u64::from_le_bytes(buf[..8].try_into().expect("8 bytes")) as usize;
        spin_read(&mut s, &mut buf[8..8 + n])?;
        spin_write(&mut s, &buf[8..8 + n])?;
    }
}

fn largest() -> usize {
    LAT_SIZES.iter().copied().max().unwrap_or(0)
}

/// Reads exactly `buf.len()` bytes from a non-blocking socket, spinning.
fn spin_read(s: &mut TcpStream, buf: &mut [u8]) -> Result<(), String> {
    let mut got = 0;
    while got < buf.len() {
        match s.read(&mut buf[got..]) {
            Ok(0) => return Err("peer closed".into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(())
}

/// Writes all of `buf` to a non-blocking socket, spinning.
fn spin_write(s: &mut TcpStream, buf: &[u8]) -> Result<(), String> {
    let mut put = 0;
    while put < buf.len() {
        match s.write(&buf[put..]) {
            Ok(n) => put += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(())
}

/// Prints the half round trip (us) at each size, best of 5 rounds: the
/// client sends an 8-byte length and the message, the server echoes the
/// message; both spin on non-blocking sockets (no sleeping in the kernel).
pub fn tcp_client(peer: &str) -> Result<(), String> {
    let mut s = TcpStream::connect((peer, TCP_PORT)).map_err(|e| e.to_string())?;
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    s.set_nonblocking(true).map_err(|e| e.to_string())?;
    let mut out = vec![7u8; 8 + largest()];
    let mut back = vec![0u8; largest()];
    let mut line = Vec::new();
    for &n in &LAT_SIZES {
        out[..8].copy_from_slice(&(n as u64).to_le_bytes());
        let iters = iterations(n);
        let mut best = f64::MAX;
        for _ in 0..5 {
            let t = Instant::now();
            for _ in 0..iters {
                spin_write(&mut s, &out[..8 + n])?;
                spin_read(&mut s, &mut back[..n])?;
            }
            best = best.min(t.elapsed().as_secs_f64() * 1e6 / iters as f64 / 2.0);
        }
        line.push(format!("{best:.2}"));
    }
    println!("{}", line.join(" "));
    Ok(())
}

/// Round trips per measurement of an `n`-byte ping-pong.
fn iterations(n: usize) -> usize {
    match n {
        0..=4096 => 10_000,
        4097..=65536 => 1000,
        65537..=1048576 => 100,
        _ => 50,
    }
}

/// One fi_pingpong configuration: provider and endpoint type.
pub struct FiPingpong {
    /// `-p`: provider (`tcp`, or `tcp;ofi_rxm` for RDM over rxm).
    pub provider: &'static str,
    /// `-e`: endpoint type (`msg`, `rdm`).
    pub endpoint: &'static str,
}

/// The configurations the runner tries: tcp's own connected endpoints,
/// RDM over rxm, and the `net` provider's own RDM endpoints.
pub const FI_PINGPONGS: [FiPingpong; 3] = [
    FiPingpong {
        provider: "tcp",
        endpoint: "msg",
    },
    FiPingpong {
        provider: "tcp;ofi_rxm",
        endpoint: "rdm",
    },
    FiPingpong {
        provider: "net",
        endpoint: "rdm",
    },
];

impl FiPingpong {
    /// The table's row name.
    pub fn name(&self) -> String {
        format!("fi_pingpong {} {}", self.provider, self.endpoint)
    }

    /// Half round trip (us, fi_pingpong's "usec/xfer": the mean over its
    /// iterations) at each latency size, best of `runs` runs; `Err` when
    /// fi_pingpong is not installed (the runner says so and skips it).
    /// fi_pingpong polls its completion queues without sleeping.
    pub fn limits(&self, hosts: &TestHosts, runs: usize) -> Result<Vec<Option<f64>>, String> {
        let exe = on_path("fi_pingpong")
            .ok_or("fi_pingpong not found (package libfabric-bin): its rows are skipped")?;
        let mut port = FI_PORT_BASE;
        let mut best = Vec::new();
        for &n in &LAT_SIZES {
            let mut b: Option<f64> = None;
            for _ in 0..runs {
                port += 1;
                match self.run(hosts, &exe, n, port) {
                    Ok(us) => b = Some(b.map_or(us, |x| x.min(us))),
                    Err(e) => eprintln!("interhost: {} at {n} B: {e}", self.name()),
                }
            }
            best.push(b);
        }
        Ok(best)
    }

    /// One ping-pong of `n`-byte messages: server on host 1, client on
    /// host 0; the client's "usec/xfer".
    fn run(
        &self,
        hosts: &TestHosts,
        exe: &std::path::Path,
        n: usize,
        port: u16,
    ) -> Result<f64, String> {
        let names = hosts.names();
        let (iters, size, port) = (iterations(n).to_string(), n.to_string(), port.to_string());
        let common = [
            "-p",
            self.provider,
            "-e",
            self.endpoint,
            "-I",
            &iters,
            "-S",
            &size,
        ];
        let limit = FI_LIMIT_S.to_string();
        let mut server = Command::new("timeout")
            .args(["-k", "5", &limit])
            .arg(hosts.launch_command())
            .arg(&names[1])
            .arg(exe)
            .args(common)
            .args(["-B", &port])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        // The client fails at once while the server is not listening yet.
        let mut out = None;
        for wait_ms in [300, 700, 1500] {
            std::thread::sleep(Duration::from_millis(wait_ms));
            let o = Command::new("timeout")
                .args(["-k", "5", &limit])
                .arg(hosts.launch_command())
                .arg(&names[0])
                .arg(exe)
                .args(common)
                .args(["-P", &port, hosts.addr(1)])
                .output()
                .map_err(|e| e.to_string())?;
            let done = o.status.success();
            out = Some(o);
            if done {
                break;
            }
        }
        let _ = server.kill();
        let _ = server.wait();
        let out = out.expect("one try at least");
        let text = String::from_utf8_lossy(&out.stdout);
        parse_usec_per_xfer(&text).ok_or_else(|| {
            let err = String::from_utf8_lossy(&out.stderr);
            format!("no result: {} {}", text.trim(), err.trim())
        })
    }
}

/// The "usec/xfer" column of fi_pingpong's result line (the line after
/// the header that names the columns).
fn parse_usec_per_xfer(text: &str) -> Option<f64> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .find(|l| l.contains("usec/xfer"))?
        .split_whitespace()
        .collect();
    let col = header.iter().position(|h| *h == "usec/xfer")?;
    let row: Vec<&str> = lines.next()?.split_whitespace().collect();
    row.get(col)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fi_pingpong_output_is_parsed() {
        let out =
            "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec\n\
                   64k     1k      =1k      125m        9.07s     14.45    4536.77       0.00\n";
        assert_eq!(parse_usec_per_xfer(out), Some(4536.77));
        assert_eq!(parse_usec_per_xfer("failed to connect"), None);
    }
}
