//! Which flags belong to one role, read from the flag definitions themselves.
//!
//! iperf3 refuses a client flag given to a server ("some option you are trying to set is client
//! only") and a server flag given to a client. Here a flag's role is its help heading: a flag
//! under [`CLIENT`] is the client's, one under [`SERVER`] or [`PUBLIC_SERVER`] the server's.
//! The few flags that sit under one role's heading (as in iperf3's `--help`) but that the other
//! role accepts too are in the [`EITHER_ROLE`] group. A new flag therefore gets its role from
//! where it is listed, and cannot be forgotten by a hand-kept list.

use clap::parser::ValueSource;
use clap::{ArgMatches, Command};

/// Help heading of the flags both roles take.
pub const SERVER_OR_CLIENT: &str = "Server or client";
/// Help heading of iperf3's server flags.
pub const SERVER: &str = "Server specific";
/// Help heading of iperf3's client flags.
pub const CLIENT: &str = "Client specific";
/// Help heading of wireperf's public-server flags (server only).
pub const PUBLIC_SERVER: &str = "Public server (wireperf only)";
/// Group of the flags listed under one role that the other role accepts too.
pub const EITHER_ROLE: &str = "either_role";

/// The clap ids of wireperf's series flags (`--repeat`, `--warmup`, `--confidence`): client-only,
/// and refused by a server with a message that names them (iperf3's "client only" names
/// nothing, and these are not iperf3's flags; `crate::iperf::repeat`).
pub const SERIES_FLAGS: [(&str, &str); 3] =
    [("repeat", "--repeat"), ("warmup", "--warmup"), ("confidence", "--confidence")];

/// The side of a test a flag belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `-c`.
    Client,
    /// `-s`.
    Server,
}

impl Role {
    fn headings(self) -> &'static [&'static str] {
        match self {
            Role::Client => &[CLIENT],
            Role::Server => &[SERVER, PUBLIC_SERVER],
        }
    }
}

/// The ids of the flags only `role` accepts. `cmd` must be built (clap fills a group's members
/// in `Command::build`).
pub fn only_for(cmd: &Command, role: Role) -> Vec<String> {
    let either: Vec<&str> =
        cmd.get_groups().filter(|g| g.get_id() == EITHER_ROLE).flat_map(|g| g.get_args().map(|a| a.as_str())).collect();
    cmd.get_arguments()
        .filter(|a| a.get_help_heading().is_some_and(|h| role.headings().contains(&h)))
        .map(|a| a.get_id().as_str())
        .filter(|id| !either.contains(id))
        .map(str::to_string)
        .collect()
}

/// The role-specific flags a command line gave (by clap id), for the lowering to refuse.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoleFlags {
    /// Client-only flags given.
    pub client_only: Vec<String>,
    /// Server-only flags given.
    pub server_only: Vec<String>,
}

impl RoleFlags {
    /// Reads which role-specific flags `m` has from the command line (defaults do not count).
    pub fn given(cmd: &Command, m: &ArgMatches) -> Self {
        let given = |role| {
            only_for(cmd, role)
                .into_iter()
                .filter(|id| m.value_source(id) == Some(ValueSource::CommandLine))
                .collect::<Vec<_>>()
        };
        RoleFlags { client_only: given(Role::Client), server_only: given(Role::Server) }
    }
}
