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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, parse_from};
    use crate::iperf::lower::{ParamError, lower};
    use clap::{Arg, CommandFactory};
    use wireperf_protocol::IperfErrno;

    fn built() -> Command {
        let mut cmd = Cli::command();
        cmd.build();
        cmd
    }

    /// `wireperf <role...> --flag[=value]` with a value the flag's parser takes.
    fn line(role: &[&str], arg: &Arg) -> Vec<String> {
        let long = arg.get_long().unwrap_or_else(|| panic!("{} has no long name", arg.get_id()));
        let mut argv: Vec<String> = std::iter::once("wireperf").chain(role.iter().copied()).map(String::from).collect();
        argv.push(if arg.get_action().takes_values() {
            // A value the flag accepts: its default, else its first possible value, else 1
            // (`--confidence` takes LEVEL,WIDTH).
            let value =
                arg.get_default_values().first().map(|v| v.to_string_lossy().into_owned()).unwrap_or_else(|| {
                    let one = if arg.get_id() == "confidence" { "95,5" } else { "1" };
                    arg.get_possible_values().first().map_or(one.to_string(), |v| v.get_name().to_string())
                });
            format!("--{long}={value}")
        } else {
            format!("--{long}")
        });
        argv
    }

    fn refused_as(role: &[&str], flag_role: Role, want: IperfErrno) -> usize {
        let cmd = built();
        let ids = only_for(&cmd, flag_role);
        for id in &ids {
            let arg = cmd.get_arguments().find(|a| a.get_id() == id.as_str()).expect("flag of the command");
            let argv = line(role, arg);
            let (cli, roles) = parse_from(&argv).unwrap_or_else(|e| panic!("{argv:?} does not parse: {e}"));
            // wireperf's series flags are refused by name (crate::iperf::repeat).
            let named = crate::iperf::repeat::FLAGS.iter().find(|(i, _)| i == id).map(|(_, flag)| *flag);
            match (lower(&cli.iperf, &roles), named) {
                (Err(ParamError::Iperf(e)), None) if e == want => {}
                (Err(ParamError::Msg(m)), Some(flag)) if flag_role == Role::Client && m.starts_with(flag) => {}
                (other, _) => panic!("{argv:?} was not refused with '{want}' or its name: {other:?}"),
            }
        }
        ids.len()
    }

    #[test]
    fn every_client_only_flag_is_refused_by_a_server() {
        // 23 in iperf3 3.12's set; more when flags are added, never fewer.
        let n = refused_as(&["-s"], Role::Client, IperfErrno::CLIENTONLY);
        assert!(n >= 23, "only {n} client-only flags");
    }

    #[test]
    fn every_server_only_flag_is_refused_by_a_client() {
        let n = refused_as(&["-c", "h"], Role::Server, IperfErrno::SERVERONLY);
        assert!(n >= 17, "only {n} server-only flags");
    }

    #[test]
    fn every_iperf_flag_has_a_role_heading() {
        let cmd = built();
        let known = [SERVER_OR_CLIENT, SERVER, CLIENT, PUBLIC_SERVER];
        for a in cmd.get_arguments().filter(|a| a.get_id() != "help") {
            let h = a.get_help_heading();
            assert!(h.is_some_and(|h| known.contains(&h)), "--{:?} has heading {h:?}", a.get_long());
        }
    }

    /// The flags listed under one role that the other accepts too. Adding one here is a
    /// decision (the server, say, takes the flag and ignores or uses it), not an accident.
    #[test]
    fn flags_both_roles_take_despite_their_heading() {
        let cmd = built();
        let mut either: Vec<&str> = cmd
            .get_groups()
            .filter(|g| g.get_id() == EITHER_ROLE)
            .flat_map(|g| g.get_args().map(|a| a.as_str()))
            .collect();
        either.sort_unstable();
        let want = ["db", "file", "no_save", "use_pkcs1_padding", "version4", "version6", "xbind"];
        assert_eq!(either, want);
    }

    #[test]
    fn defaults_do_not_count_as_given() {
        let (_, roles) = parse_from(["wireperf", "-s"]).expect("parses");
        assert_eq!(roles, RoleFlags::default());
        let (_, roles) = parse_from(["wireperf", "-c", "h", "-t", "1", "-D"]).expect("parses");
        assert_eq!((roles.client_only, roles.server_only), (vec!["time".to_string()], vec!["daemon".to_string()]));
    }
}
