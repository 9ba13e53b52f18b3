//! Tests of [`crate::iperf::roles`] over the whole command line: every role-specific flag is
//! refused by the other role. Kept apart from `roles.rs` because they parse with
//! [`crate::cli`], which itself reads the roles: `roles.rs` stays free of a loop back to it.

use crate::cli::{Cli, parse_from};
use crate::iperf::lower::lower;
use crate::iperf::roles::*;
use crate::iperf::run_spec::ParamError;
use clap::{Arg, Command, CommandFactory};
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
        let value = arg.get_default_values().first().map(|v| v.to_string_lossy().into_owned()).unwrap_or_else(|| {
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
        let named = SERIES_FLAGS.iter().find(|(i, _)| i == id).map(|(_, flag)| *flag);
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
    let mut either: Vec<&str> =
        cmd.get_groups().filter(|g| g.get_id() == EITHER_ROLE).flat_map(|g| g.get_args().map(|a| a.as_str())).collect();
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
