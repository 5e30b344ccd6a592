//! Packets exchanged between ranks, and the send paths that produce them.
//!
//! Every packet starts with a kind byte. Layouts (little endian):
//!
//! ```text
//! Eager (24-byte header, 32 with FLAG_SYNC, then payload) / Rts (48 bytes):
//!   0 kind | 1 flags | 2..4 reserved | 4 context u32 | 8 source i32 | 12 tag i32
//!   16 total_len u64 | 24 send_id u64 (Rts, or Eager with FLAG_SYNC)
//!   | 32 addr u64 (Rts) | 40 pid u32 (Rts) | 44 reserved
//!   (the short eager header lets a message of up to 24 bytes travel in the
//!   cache line that publishes it: a ring cell's own header is 16 bytes)
//! Cont (8-byte header): 0 kind | payload follows (next bytes of the current eager message)
//! Ack / Fin / Cts (24 bytes): 0 kind | 8 send_id u64 | 16 recv_id u64
//! Data (16-byte header): 0 kind | 8 recv_id u64 | payload (next bytes of a streamed rendezvous)
//! Split (56 bytes): 0 kind | 8 send_id | 16 recv_id | 24 addr (receiver's buffer) | 32 offset
//!                   | 40 len | 48 pid u32 (receiver): "write bytes [offset, offset+len) to addr+offset"
//! Wrote (24 bytes, as Ack): byte 1 = 1 when the sender's write failed
//! Flags (byte 1 of Eager / Rts): FLAG_SYNC (wants an Ack), FLAG_PACKED (Rts: no address),
//!   FLAG_IPC (Rts: device memory; an 80-byte CUDA IPC description follows the header),
//!   FLAG_RMA (Rts: registered for reads over the network; 16 bytes follow the header:
//!   0 key u64 | 8 address u64, as the reader names the buffer);
//! (byte 1 of Cts): FLAG_DIRECT (recv_id is a direct-transfer key)
//! ```
//!
//! Cooperative single copy: for large rendezvous messages between ranks
//! that each have a core, the receiver reads the first half from the
//! sender's memory while the sender writes the second half into the
//! receiver's memory, so both cores copy at once.
//!
//! Ordering: packets between one pair of ranks are delivered in order, so a
//! Cont packet always belongs to the last Eager packet from the same peer,
//! and Data packets for one receive arrive in offset order.

use crate::transport::RemoteBuf;

/// Packet kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// First (maybe only) piece of an eagerly sent message.
    Eager = 1,
    /// Following piece of the current eager message.
    Cont = 2,
    /// Rendezvous request: the receiver reads the data from the sender (CMA).
    Rts = 3,
    /// Receiver finished reading a rendezvous message: the send completes.
    Fin = 4,
    /// A synchronous eager send was matched.
    Ack = 5,
    /// Receiver cannot read sender memory: stream the data (pipelined copy).
    Cts = 6,
    /// A piece of a streamed rendezvous message.
    Data = 7,
    /// Receiver asks the sender to write the second part itself.
    Split = 8,
    /// Sender finished (or failed) its part of a split copy.
    Wrote = 9,
    /// Receiver gives back eager credit (bytes in the send id field).
    Credit = 10,
}

impl Kind {
    fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::Eager,
            2 => Kind::Cont,
            3 => Kind::Rts,
            4 => Kind::Fin,
            5 => Kind::Ack,
            6 => Kind::Cts,
            7 => Kind::Data,
            8 => Kind::Split,
            9 => Kind::Wrote,
            10 => Kind::Credit,
            _ => return None,
        })
    }
}

/// Flag: the sender wants an Ack when the message is matched (MPI_Ssend).
pub const FLAG_SYNC: u8 = 1;
/// Flag (Rts): the data is CUDA device memory the receiver opens by IPC;
/// the Rts is followed by the buffer's IPC description
/// ([`crate::mem::cuda::IpcDesc`]), and the receiver copies, then sends Fin.
pub const FLAG_IPC: u8 = 8;
/// Flag (Cts): the receiver posted a direct receive through the transport;
/// the Cts's receive id is its key, and the sender hands its whole buffer
/// to the transport (`Transport::post_direct_send`) instead of streaming.
pub const FLAG_DIRECT: u8 = 4;
/// Flag (Rts): the sender's buffer is registered for the receiver to read
/// over the network (RMA); [`RMA_DESC`] bytes follow the header
/// ([`rma_desc`]), and the receiver reads, then sends Fin.
pub const FLAG_RMA: u8 = 16;
/// Bytes of the description after an Rts with [`FLAG_RMA`].
pub const RMA_DESC: usize = 16;

/// The description an Rts with [`FLAG_RMA`] carries.
pub fn rma_desc(remote: RemoteBuf) -> [u8; RMA_DESC] {
    let mut b = [0u8; RMA_DESC];
    b[..8].copy_from_slice(&remote.key.to_le_bytes());
    b[8..].copy_from_slice(&remote.addr.to_le_bytes());
    b
}

/// Reads the description after an Rts with [`FLAG_RMA`].
pub fn decode_rma_desc(bytes: &[u8]) -> Option<RemoteBuf> {
    (bytes.len() >= RMA_DESC).then(|| RemoteBuf {
        key: u64_at(bytes, 0),
        addr: u64_at(bytes, 8),
    })
}

/// Flag (Rts): the sender's data is not one contiguous run, so it has no
/// address to read; the receiver answers Cts and the sender streams Data
/// packets packed straight from its layout.
pub const FLAG_PACKED: u8 = 2;

/// Size of the Rts header, the longest message header.
pub const MSG_HEADER: usize = 48;
/// Size of the Eager header without [`FLAG_SYNC`].
pub const EAGER_HEADER: usize = 24;
/// Size of the Eager header with [`FLAG_SYNC`] (it carries the send id).
pub const SYNC_EAGER_HEADER: usize = 32;
/// Size of the Cont header.
pub const CONT_HEADER: usize = 8;
/// Size of the Data header.
pub const DATA_HEADER: usize = 16;
/// Size of Ack/Fin/Cts/Wrote/Credit packets.
pub const CTRL_LEN: usize = 24;
/// Size of Split packets.
pub const SPLIT_LEN: usize = 56;

/// A split request: what the sender must write where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitReq {
    /// Sender's request id.
    pub send_id: u64,
    /// Receiver's request id.
    pub recv_id: u64,
    /// Receiver's buffer start.
    pub addr: u64,
    /// First byte the sender writes.
    pub offset: u64,
    /// Bytes the sender writes.
    pub len: u64,
    /// Receiver's pid.
    pub pid: u32,
}

impl SplitReq {
    /// Serialises the request.
    pub fn encode(&self) -> [u8; SPLIT_LEN] {
        let mut b = [0u8; SPLIT_LEN];
        b[0] = Kind::Split as u8;
        b[8..16].copy_from_slice(&self.send_id.to_le_bytes());
        b[16..24].copy_from_slice(&self.recv_id.to_le_bytes());
        b[24..32].copy_from_slice(&self.addr.to_le_bytes());
        b[32..40].copy_from_slice(&self.offset.to_le_bytes());
        b[40..48].copy_from_slice(&self.len.to_le_bytes());
        b[48..52].copy_from_slice(&self.pid.to_le_bytes());
        b
    }
}

/// The matching-relevant part of a message header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MsgHeader {
    /// Eager or Rts.
    pub kind: Kind,
    /// [`FLAG_SYNC`], [`FLAG_PACKED`] or 0.
    pub flags: u8,
    /// Communicator context id.
    pub context: u32,
    /// Sender's rank in the communicator.
    pub source: i32,
    /// Tag.
    pub tag: i32,
    /// Full message length in bytes.
    pub total_len: u64,
    /// Sender's request id (for Ack/Fin/Cts), 0 if none.
    pub send_id: u64,
    /// Rts: address of the data in the sender.
    pub addr: u64,
    /// Rts: the sender's pid.
    pub pid: u32,
}

/// A decoded packet, borrowing its payload from the cell.
#[derive(Debug, PartialEq, Eq)]
pub enum Packet<'a> {
    /// Eager or Rts with the bytes that followed the header.
    Msg(MsgHeader, &'a [u8]),
    /// Continuation bytes of the current eager message.
    Cont(&'a [u8]),
    /// Control packet.
    Ctrl {
        /// Ack, Fin, Cts or Wrote.
        kind: Kind,
        /// Kind-specific flags (Wrote: 1 = failed).
        flags: u8,
        /// Sender-side request id.
        send_id: u64,
        /// Receiver-side request id (Cts).
        recv_id: u64,
    },
    /// A split-copy request.
    Split(SplitReq),
    /// Streamed rendezvous bytes for receive `recv_id`.
    Data {
        /// Receiver-side request id.
        recv_id: u64,
        /// The bytes.
        bytes: &'a [u8],
    },
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or_default())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default())
}

impl MsgHeader {
    /// Bytes the encoded header takes: [`EAGER_HEADER`],
    /// [`SYNC_EAGER_HEADER`] or (Rts) [`MSG_HEADER`].
    #[inline]
    pub fn len(&self) -> usize {
        match (self.kind, self.flags & FLAG_SYNC != 0) {
            (Kind::Eager, false) => EAGER_HEADER,
            (Kind::Eager, true) => SYNC_EAGER_HEADER,
            _ => MSG_HEADER,
        }
    }

    /// Writes the header into the first [`len`](MsgHeader::len) bytes of `out`.
    ///
    /// # Panics
    /// If `out` is shorter than that.
    #[inline]
    pub fn write(&self, out: &mut [u8]) {
        let len = self.len();
        let b = &mut out[..len];
        b[0] = self.kind as u8;
        b[1] = self.flags;
        b[2..4].fill(0);
        b[4..8].copy_from_slice(&self.context.to_le_bytes());
        b[8..12].copy_from_slice(&self.source.to_le_bytes());
        b[12..16].copy_from_slice(&self.tag.to_le_bytes());
        b[16..24].copy_from_slice(&self.total_len.to_le_bytes());
        if len > EAGER_HEADER {
            b[24..32].copy_from_slice(&self.send_id.to_le_bytes());
        }
        if len > SYNC_EAGER_HEADER {
            b[32..40].copy_from_slice(&self.addr.to_le_bytes());
            b[40..44].copy_from_slice(&self.pid.to_le_bytes());
            b[44..48].fill(0);
        }
    }

    /// The encoded header: the first [`len`](MsgHeader::len) bytes count.
    pub fn encode(&self) -> [u8; MSG_HEADER] {
        let mut b = [0u8; MSG_HEADER];
        self.write(&mut b);
        b
    }
}

/// The header of a Cont packet.
pub const fn cont_header() -> [u8; CONT_HEADER] {
    [Kind::Cont as u8, 0, 0, 0, 0, 0, 0, 0]
}

/// The header of a Data packet.
pub fn data_header(recv_id: u64) -> [u8; DATA_HEADER] {
    let mut b = [0u8; DATA_HEADER];
    b[0] = Kind::Data as u8;
    b[8..16].copy_from_slice(&recv_id.to_le_bytes());
    b
}

/// An Ack, Fin or Cts packet.
pub fn ctrl(kind: Kind, send_id: u64, recv_id: u64) -> [u8; CTRL_LEN] {
    ctrl_flagged(kind, 0, send_id, recv_id)
}

/// A control packet with flags.
pub fn ctrl_flagged(kind: Kind, flags: u8, send_id: u64, recv_id: u64) -> [u8; CTRL_LEN] {
    let mut b = [0u8; CTRL_LEN];
    b[0] = kind as u8;
    b[1] = flags;
    b[8..16].copy_from_slice(&send_id.to_le_bytes());
    b[16..24].copy_from_slice(&recv_id.to_le_bytes());
    b
}

/// Decodes one packet. Packets come from ranks of the same job through
/// memory only they share; a malformed one means memory corruption, which is
/// reported as `None` rather than trusted.
pub fn decode(cell: &[u8]) -> Option<Packet<'_>> {
    let kind = Kind::from_u8(*cell.first()?)?;
    match kind {
        Kind::Eager | Kind::Rts if cell.len() >= EAGER_HEADER => {
            let mut h = MsgHeader {
                kind,
                flags: cell[1],
                context: u32_at(cell, 4),
                source: u32_at(cell, 8) as i32,
                tag: u32_at(cell, 12) as i32,
                total_len: u64_at(cell, 16),
                send_id: 0,
                addr: 0,
                pid: 0,
            };
            let len = h.len();
            if cell.len() < len {
                return None;
            }
            if len > EAGER_HEADER {
                h.send_id = u64_at(cell, 24);
            }
            if len > SYNC_EAGER_HEADER {
                h.addr = u64_at(cell, 32);
                h.pid = u32_at(cell, 40);
            }
            Some(Packet::Msg(h, &cell[len..]))
        }
        Kind::Cont if cell.len() >= CONT_HEADER => Some(Packet::Cont(&cell[CONT_HEADER..])),
        Kind::Split if cell.len() >= SPLIT_LEN => Some(Packet::Split(SplitReq {
            send_id: u64_at(cell, 8),
            recv_id: u64_at(cell, 16),
            addr: u64_at(cell, 24),
            offset: u64_at(cell, 32),
            len: u64_at(cell, 40),
            pid: u32_at(cell, 48),
        })),
        Kind::Ack | Kind::Fin | Kind::Cts | Kind::Wrote | Kind::Credit
            if cell.len() >= CTRL_LEN =>
        {
            Some(Packet::Ctrl {
                kind,
                flags: cell[1],
                send_id: u64_at(cell, 8),
                recv_id: u64_at(cell, 16),
            })
        }
        Kind::Data if cell.len() >= DATA_HEADER => Some(Packet::Data {
            recv_id: u64_at(cell, 8),
            bytes: &cell[DATA_HEADER..],
        }),
        _ => None,
    }
}

/// How a message of a given size travels (decided once per send).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendPath {
    /// Copied into the receiver's ring (one or more cells).
    Eager,
    /// Receiver reads it straight from the sender's buffer (single copy via
    /// CMA), or asks for it to be streamed when it cannot.
    Rendezvous,
}

/// Picks the path for `len` bytes given the eager limit.
pub fn choose_path(len: usize, eager_limit: usize) -> SendPath {
    if len <= eager_limit {
        SendPath::Eager
    } else {
        SendPath::Rendezvous
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_header_round_trips() {
        let h = MsgHeader {
            kind: Kind::Rts,
            flags: FLAG_SYNC,
            context: 7,
            source: 3,
            tag: -5,
            total_len: 1 << 33,
            send_id: 99,
            addr: 0xdead_beef,
            pid: 1234,
        };
        let mut cell = h.encode().to_vec();
        cell.extend_from_slice(b"xy");
        assert_eq!(decode(&cell), Some(Packet::Msg(h, b"xy")));
        // Eager headers are shorter: no address or pid, a send id only
        // when the sender waits for an Ack.
        for (flags, send_id, len) in [(0, 0, EAGER_HEADER), (FLAG_SYNC, 99, SYNC_EAGER_HEADER)] {
            let e = MsgHeader {
                kind: Kind::Eager,
                flags,
                send_id,
                addr: 0,
                pid: 0,
                ..h
            };
            assert_eq!(e.len(), len);
            let mut cell = e.encode()[..len].to_vec();
            cell.extend_from_slice(b"xyz");
            assert_eq!(decode(&cell), Some(Packet::Msg(e, b"xyz")));
            assert_eq!(decode(&cell[..len - 1]), None, "a cut header");
        }
    }

    #[test]
    fn small_packets_round_trip() {
        let c = ctrl(Kind::Fin, 5, 6);
        assert_eq!(
            decode(&c),
            Some(Packet::Ctrl {
                kind: Kind::Fin,
                flags: 0,
                send_id: 5,
                recv_id: 6
            })
        );
        let w = ctrl_flagged(Kind::Wrote, 1, 5, 6);
        assert!(matches!(
            decode(&w),
            Some(Packet::Ctrl {
                kind: Kind::Wrote,
                flags: 1,
                ..
            })
        ));
        let sp = SplitReq {
            send_id: 1,
            recv_id: 2,
            addr: 3,
            offset: 4,
            len: 5,
            pid: 6,
        };
        assert_eq!(decode(&sp.encode()), Some(Packet::Split(sp)));
        let mut d = data_header(9).to_vec();
        d.push(1);
        assert_eq!(
            decode(&d),
            Some(Packet::Data {
                recv_id: 9,
                bytes: &[1]
            })
        );
        let mut k = cont_header().to_vec();
        k.push(2);
        assert_eq!(decode(&k), Some(Packet::Cont(&[2])));
    }

    #[test]
    fn rma_descriptions_round_trip() {
        let r = RemoteBuf {
            addr: 0x7f00_0000_1000,
            key: u64::MAX - 3,
        };
        assert_eq!(decode_rma_desc(&rma_desc(r)), Some(r));
        assert_eq!(decode_rma_desc(&rma_desc(r)[..15]), None);
    }

    #[test]
    fn corrupt_packets_are_refused() {
        assert_eq!(decode(&[]), None);
        assert_eq!(decode(&[0; 64]), None);
        assert_eq!(decode(&[Kind::Eager as u8; 10]), None);
        let mut rts = [0u8; 40];
        rts[0] = Kind::Rts as u8;
        assert_eq!(decode(&rts), None, "an Rts needs its 48 bytes");
        assert_eq!(decode(&[Kind::Fin as u8; 8]), None);
    }

    #[test]
    fn path_by_size() {
        assert_eq!(choose_path(0, 64), SendPath::Eager);
        assert_eq!(choose_path(64, 64), SendPath::Eager);
        assert_eq!(choose_path(65, 64), SendPath::Rendezvous);
    }
}
