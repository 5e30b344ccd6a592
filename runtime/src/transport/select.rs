//! Choosing each peer's endpoint, once, at start: self for a world of one,
//! shared memory alone when every rank runs on this host, else the
//! [`Router`] over shared memory (this host's ranks) and the fabric (the
//! others). Locality is the launcher's placement (`PMI_process_mapping`),
//! never what happens to be reachable.

use std::net::{IpAddr, Ipv4Addr, ToSocketAddrs};
use std::sync::Arc;

use super::ofi::link::{FabricConfig, FabricLink};
use super::ofi::mr::{MrPolicy, RndvPolicy};
use super::router::Router;
use super::self_::NoPeers;
use super::shm::{ShmConfig, ShmNode, ShmTransport};
use super::Transport;
use crate::bootstrap::Bootstrap;
use crate::config::Config;
use crate::error::Error;

/// The PMI key under which rank `rank` publishes its fabric address.
fn address_key(rank: usize) -> String {
    format!("oxmpi-ofi-addr-{rank}")
}

/// Builds the transport that reaches every other rank of the world.
pub fn connect(boot: &mut dyn Bootstrap, config: &Config) -> Result<Arc<dyn Transport>, Error> {
    if boot.size() == 1 {
        return Ok(Arc::new(NoPeers));
    }
    let (me, size) = (boot.rank(), boot.size());
    let nodes = boot.node_of_rank().to_vec();
    let remote: Vec<usize> = (0..size).filter(|&r| nodes[r] != nodes[me]).collect();
    let debug = config.debug_enabled("transport");
    // The fabric endpoint is opened and published before shared memory's
    // fences, which then make every address visible.
    let fabric = if remote.is_empty() {
        None
    } else {
        let link = FabricLink::open(&fabric_config(config), me, size, &remote)?;
        boot.put(&address_key(me), &hex(&link.address()?))?;
        if debug {
            eprintln!(
                "oxmpi[transport]: rank {me}: fabric endpoint {}",
                link.description()
            );
        }
        Some(link)
    };
    let node = ShmNode::establish(boot, &ShmConfig::from_config(config))?;
    let shm = ShmTransport::new(node, size);
    let Some(fabric) = fabric else {
        if debug {
            eprintln!("oxmpi[transport]: rank {me}: every peer on this host: shm");
        }
        return Ok(Arc::new(shm));
    };
    for &peer in &remote {
        let text = boot
            .get(&address_key(peer))?
            .ok_or_else(|| Error::Bootstrap(format!("rank {peer} published no fabric address")))?;
        let address = unhex(&text).ok_or_else(|| {
            Error::Bootstrap(format!("rank {peer}'s fabric address {text:?} is not hex"))
        })?;
        fabric.add_peer(peer, &address)?;
    }
    let cold_polls = u32::try_from(config.ofi_cold_polls).unwrap_or(u32::MAX);
    let router = Router::new(me, &nodes, shm, fabric, cold_polls);
    if debug {
        for (peer, route) in router.routes().iter().enumerate() {
            eprintln!(
                "oxmpi[transport]: rank {me} -> rank {peer} (node {}): {}",
                nodes[peer],
                route.name()
            );
        }
    }
    Ok(Arc::new(router))
}

/// The fabric link's settings from the configuration.
pub(crate) fn fabric_config(config: &Config) -> FabricConfig {
    let named = |s: &str| (!s.is_empty()).then(|| s.to_string());
    FabricConfig {
        provider: named(&config.ofi_provider),
        iface: named(&config.ofi_iface),
        addr: named(&config.ofi_addr).or_else(host_address),
        packet: config.ofi_packet,
        credits: config.ofi_credits,
        mr: match config.ofi_mr.as_str() {
            "register" => MrPolicy::Register,
            _ => MrPolicy::Auto,
        },
        rndv: match config.ofi_rndv.as_str() {
            "read" => RndvPolicy::Read,
            "tagged" => RndvPolicy::Tagged,
            _ => RndvPolicy::Auto,
        },
        debug: config.debug_enabled("transport"),
    }
}

/// Without `OXMPI_OFI_ADDR` (which oxrun sets for jobs across hosts): an
/// IPv4 address of this host's name that an interface that is up holds,
/// other than loopback, else the source address of the default route, so
/// that a job on one host (and the jobs it spawns or connects to) does not
/// open its endpoint on whichever interface the provider happens to list
/// first, such as a bridge that comes and goes.
fn host_address() -> Option<String> {
    named_address()
        .or_else(default_route_source)
        .map(|ip| ip.to_string())
}

/// The source address the kernel picks toward a documentation address
/// (TEST-NET-3) that only a default route leads to: connecting a UDP
/// socket looks the route up and sends nothing.
fn default_route_source() -> Option<Ipv4Addr> {
    let socket = std::net::UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).ok()?;
    socket.connect((Ipv4Addr::new(203, 0, 113, 1), 9)).ok()?;
    match socket.local_addr().ok()?.ip() {
        IpAddr::V4(ip) if !ip.is_unspecified() && !ip.is_loopback() => Some(ip),
        _ => None,
    }
}

fn named_address() -> Option<Ipv4Addr> {
    let local: Vec<Ipv4Addr> = nix::ifaddrs::getifaddrs()
        .ok()?
        .filter(|a| a.flags.contains(nix::net::if_::InterfaceFlags::IFF_UP))
        .filter_map(|a| a.address?.as_sockaddr_in().map(|s| s.ip()))
        .filter(|ip| !ip.is_loopback() && !ip.is_link_local())
        .collect();
    let name = nix::unistd::gethostname().ok()?.into_string().ok()?;
    (name.as_str(), 0)
        .to_socket_addrs()
        .ok()?
        .filter_map(|a| match a.ip() {
            IpAddr::V4(v4) => Some(v4),
            IpAddr::V6(_) => None,
        })
        .find(|ip| local.contains(ip))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_survive_the_key_value_space() {
        let addr = [0u8, 1, 0x7f, 0x80, 0xff, 10, 200];
        assert_eq!(hex(&addr), "00017f80ff0ac8");
        assert_eq!(unhex(&hex(&addr)).as_deref(), Some(&addr[..]));
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("zz"), None);
        assert_eq!(unhex("").as_deref(), Some(&[][..]));
    }
}
