//! iperf3 3.12's text output, rendered from the `-J` schema types.
//!
//! The same [`TestReport`](wireperf_protocol::schema::TestReport) that becomes the JSON
//! document is what the text is printed from, so text and JSON can never disagree. What the
//! schema does not say (which side we are, `-f`, `-V`, whether retransmits are readable) is
//! in [`TextContext`].
//!
//! Files: [`lines`] has every line format of `iperf_locale.c`; [`interval`] renders one
//! reporting interval; [`summary`] the end-of-test block; [`preamble`] the lines before the
//! first interval (connecting, connected, banner, `-V` details) and `iperf Done.`;
//! [`prefix`] applies `--timestamps` and `-T`.

pub mod interval;
pub mod lines;
pub mod preamble;
pub mod prefix;
pub mod summary;

use wireperf_protocol::{Protocol, TestParams};

/// Which end of the test this host is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Role {
    /// `-c`: prints `Connecting…`, both halves of the summary and `iperf Done.`.
    #[default]
    Client,
    /// `-s`: prints the banner, `Accepted connection…`, and only its own half of the summary
    /// (it prints before the results exchange, so it knows nothing of the peer).
    Server,
}

/// Everything the text renderer needs that the `-J` schema does not carry.
///
/// Fill it with [`TextContext::new`] from the test's [`TestParams`] (the server uses the
/// parameters it received), then set `format` (`-f`), `verbose` (`-V`) and the two
/// retransmit facts. Which streams this host sends on is *not* here: every stream and sum in
/// the schema carries its `sender` flag, and the renderer reads that.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextContext {
    /// Client or server.
    pub role: Role,
    /// TCP or UDP: picks the line layouts (Retr/Cwnd columns, or Jitter/Lost/Datagrams).
    pub protocol: Protocol,
    /// Streams per direction (`-P`). `[SUM]` lines and the separator between intervals
    /// appear only when this is above 1.
    pub num_streams: u32,
    /// `--bidir`: role tags (`[TX-C]`…), the `[Role]` headers, two blocks per interval and in
    /// the summary.
    pub bidir: bool,
    /// `-R`: the server sends. Ignored when `bidir` is set.
    pub reverse: bool,
    /// The `-f` letter for the Bitrate column: `k m g t` (bits, decimal) or `K M G T`
    /// (bytes, binary); `a` (adaptive bits) when `-f` was not given. Transfer and Cwnd are
    /// always adaptive bytes.
    pub format: char,
    /// `-V`: `Test Complete. Summary Results:`, CPU and congestion lines, and on the server
    /// the `(sender statistics not available)` lines.
    pub verbose: bool,
    /// This host's OS reports TCP retransmits and cwnd for streams it sends on (Linux: true).
    /// Only used when this host sends: it selects the `Retr  Cwnd` interval layout and the
    /// Retr column of this host's sender summaries.
    pub local_has_retransmits: bool,
    /// The peer said `"sender_has_retransmits": 1` in the results exchange (it sent, and its
    /// OS reports retransmits). Selects the Retr column for the peer's sending direction in
    /// the client's summary (`-R`, and the RX block of `--bidir`). Ignored on the server,
    /// which prints its summary before the exchange, as iperf3 does.
    pub remote_sender_has_retransmits: bool,
}

impl TextContext {
    /// The context for `role` running `params`: `-f` unset (`a`), not verbose, local
    /// retransmits readable on Linux, nothing known of the peer yet.
    pub fn new(role: Role, params: &TestParams) -> Self {
        Self {
            role,
            protocol: params.protocol,
            num_streams: params.parallel,
            bidir: params.bidirectional,
            reverse: params.reverse,
            format: 'a',
            verbose: false,
            local_has_retransmits: cfg!(target_os = "linux"),
            remote_sender_has_retransmits: false,
        }
    }

    /// True on the host that sends in a one-direction test (client normally, server with
    /// `-R`); both hosts send in `--bidir`.
    pub fn local_sends(&self) -> bool {
        self.bidir || ((self.role == Role::Client) != self.reverse)
    }

    /// The direction blocks in the order iperf3 prints them (`iperf_print_intermediate` and
    /// `iperf_print_results`): one block normally; in `--bidir` the client→server direction
    /// first, which is TX on the client and RX on the server. The client→server direction's
    /// sums are the unsuffixed `sum`/`sum_sent`/`sum_received` keys, the other direction's
    /// the `*_bidir_reverse` keys, on both sides.
    pub(crate) fn blocks(&self) -> Vec<Block> {
        if self.bidir {
            let client = self.role == Role::Client;
            vec![Block { local_sends: client, reverse_sums: false }, Block { local_sends: !client, reverse_sums: true }]
        } else {
            vec![Block { local_sends: self.local_sends(), reverse_sums: false }]
        }
    }

    /// `[TX-C]`, `[RX-S]`… in `--bidir`, empty otherwise.
    pub(crate) fn role_tag(&self, local_sends: bool) -> &'static str {
        if !self.bidir {
            return "";
        }
        match (local_sends, self.role) {
            (true, Role::Client) => "[TX-C]",
            (false, Role::Client) => "[RX-C]",
            (true, Role::Server) => "[TX-S]",
            (false, Role::Server) => "[RX-S]",
        }
    }

    /// iperf3's `sender_has_retransmits` while intervals print: set on a host that sends.
    pub(crate) fn interval_retransmits(&self) -> bool {
        // iperf3 3.12 decides the interval header by its `sender_has_retransmits` flag, which a
        // client sets for every TCP test, even `-R` (seen with Debian's 3.12 binary: the `-R`
        // client prints the `Retr  Cwnd` header over plain receiver lines). A server sets it
        // only when it sends.
        self.protocol == Protocol::Tcp
            && self.local_has_retransmits
            && (self.role == Role::Client || self.local_sends())
    }

    /// Whether the sender of `block`'s direction has a Retr column in the summary.
    pub(crate) fn summary_retransmits(&self, block: Block) -> bool {
        self.protocol == Protocol::Tcp
            && if block.local_sends {
                self.local_has_retransmits
            } else {
                self.role == Role::Client && self.remote_sender_has_retransmits
            }
    }

    fn is_server(&self) -> bool {
        self.role == Role::Server
    }
}

/// One direction of the test as iperf3 groups its output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Block {
    /// This host sends in this direction (iperf3's `stream_must_be_sender`).
    pub(crate) local_sends: bool,
    /// This direction's sums are the `*_bidir_reverse` keys.
    pub(crate) reverse_sums: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_params() {
        let params = TestParams { parallel: 2, bidirectional: true, ..TestParams::default() };
        let ctx = TextContext::new(Role::Server, &params);
        assert_eq!(ctx.num_streams, 2);
        assert!(ctx.bidir && ctx.local_sends());
        assert_eq!(ctx.format, 'a');
        let b = ctx.blocks();
        assert!(!b[0].local_sends && !b[0].reverse_sums);
        assert!(b[1].local_sends && b[1].reverse_sums);
        assert_eq!(ctx.role_tag(false), "[RX-S]");
    }

    #[test]
    fn who_sends() {
        let mut ctx = TextContext::new(Role::Client, &TestParams::default());
        assert!(ctx.local_sends());
        ctx.reverse = true;
        assert!(!ctx.local_sends());
        ctx.role = Role::Server;
        assert!(ctx.local_sends());
    }
}
