//! Whole tests between a client and a server session in memory (see [`Pair`]): normal,
//! reverse and bidir runs, refusals, timeouts, garbage and vanished peers.

use crate::support::{Pair, full_test};
use proptest::prelude::*;
use std::time::Duration;
use wireperf_protocol::client::{ClientError, ClientEvent, ClientSession};
use wireperf_protocol::server::{ServerError, ServerEvent, ServerLimits, ServerSession};
use wireperf_protocol::{Cookie, IperfErrno, TestParams};

#[test]
fn normal_reverse_and_bidir_tests_complete() {
    for params in [
        TestParams::default(),
        TestParams { reverse: true, ..Default::default() },
        TestParams { bidirectional: true, parallel: 4, ..Default::default() },
        TestParams { num: 1 << 20, time: 0, omit: 1, ..Default::default() },
    ] {
        full_test(&params, 4096);
    }
}

#[test]
fn busy_server_answer_is_access_denied() {
    let mut c = ClientSession::new(Cookie::random(), &TestParams::default());
    let _ = c.take_output();
    c.handle_input(&ServerSession::busy_reply()).unwrap();
    assert_eq!(c.poll_event(), Some(ClientEvent::AccessDenied));
    assert!(c.is_finished());
}

#[test]
fn refused_parameters_reach_the_client_as_server_error() {
    let mut p = Pair::new(&TestParams::default(), 4096);
    p.pump();
    p.server.refuse(IperfErrno::TOTALRATE, 0);
    p.pump();
    assert_eq!(p.client_events, vec![ClientEvent::ServerError { i_errno: IperfErrno::TOTALRATE, errno: Some(0) }]);
}

#[test]
fn server_error_without_errno_then_eof() {
    let mut c = ClientSession::new(Cookie::random(), &TestParams::default());
    c.handle_input(&[0xfe, 0, 0, 0, 142]).unwrap();
    assert_eq!(c.poll_event(), None);
    c.handle_eof().unwrap();
    assert_eq!(c.poll_event(), Some(ClientEvent::ServerError { i_errno: IperfErrno::AUTHTEST, errno: None }));
}

#[test]
fn half_a_cookie_then_silence_times_out() {
    let mut s = ServerSession::new(Duration::ZERO, ServerLimits::default());
    s.handle_input(Duration::from_secs(1), &[b'a'; 20]).unwrap();
    assert_eq!(s.poll_timeout(), Some(Duration::from_secs(30)));
    s.handle_timeout(Duration::from_secs(29)).unwrap();
    let e = s.handle_timeout(Duration::from_secs(30)).unwrap_err();
    assert_eq!(e, ServerError::Timeout("waiting for the cookie"));
    assert_eq!(e.errno(), IperfErrno::RECVCOOKIE);
}

#[test]
fn a_test_that_is_never_ended_expires_after_the_safety_margin() {
    let mut p = Pair::new(&TestParams::default(), 4096);
    p.pump();
    p.server.accept_params(p.now).unwrap();
    p.server.start_test(p.now, Some(Duration::from_secs(10))).unwrap();
    p.pump();
    p.server.handle_timeout(Duration::from_secs(49)).unwrap();
    assert_eq!(p.server.handle_timeout(Duration::from_secs(50)), Err(ServerError::DurationExpired));
}

#[test]
fn absurd_length_prefix_is_refused_without_allocating() {
    let mut s = ServerSession::new(Duration::ZERO, ServerLimits::default());
    s.handle_input(Duration::ZERO, &[b'x'; 37]).unwrap();
    let e = s.handle_input(Duration::ZERO, &[0x80, 0, 0, 0]).unwrap_err();
    assert!(matches!(e, ServerError::Frame(_)), "{e:?}");
    assert_eq!(e.errno(), IperfErrno::RECVPARAMS);
    assert!(s.is_finished());
}

#[test]
fn json_with_wrong_types_is_an_error_not_a_panic() {
    let mut s = ServerSession::new(Duration::ZERO, ServerLimits::default());
    s.handle_input(Duration::ZERO, &[b'x'; 37]).unwrap();
    let body = br#"{"tcp":true,"parallel":"many","len":"huge"}"#;
    let mut msg = (body.len() as u32).to_be_bytes().to_vec();
    msg.extend_from_slice(body);
    // Strings where numbers belong read as absent (3.12 semantics): defaults apply.
    s.handle_input(Duration::ZERO, &msg).unwrap();
    let _ = s.poll_event();
    let Some(ServerEvent::Params(p)) = s.poll_event() else { panic!() };
    assert_eq!((p.parallel, p.len), (1, 128 * 1024));
}

#[test]
fn garbage_state_byte_while_running_fails_the_test() {
    let mut p = Pair::new(&TestParams::default(), 4096);
    p.pump();
    p.server.accept_params(p.now).unwrap();
    p.server.start_test(p.now, None).unwrap();
    p.pump();
    assert_eq!(p.server.handle_input(p.now, &[0x42]), Err(ServerError::UnexpectedState(0x42)));
}

#[test]
fn client_terminate_and_eof_mid_test() {
    let mut p = Pair::new(&TestParams::default(), 4096);
    p.pump();
    p.server.accept_params(p.now).unwrap();
    p.server.start_test(p.now, None).unwrap();
    p.pump();
    p.client.terminate();
    p.pump();
    assert_eq!(p.server_events.last(), Some(&ServerEvent::ClientTerminate));

    let mut q = Pair::new(&TestParams::default(), 4096);
    q.pump();
    assert_eq!(q.server.handle_eof(), Err(ServerError::ControlClosed));
    assert_eq!(q.client.handle_eof(), Err(ClientError::ControlClosed));
}

#[test]
fn unexpected_state_at_the_client_is_reported() {
    let mut c = ClientSession::new(Cookie::random(), &TestParams::default());
    let e = c.handle_input(&[13]).unwrap_err();
    assert!(matches!(e, ClientError::UnexpectedState { state: 13, .. }));
    assert_eq!(e.errno(), IperfErrno::MESSAGE);
}

#[test]
fn server_terminate_reaches_the_client() {
    let mut p = Pair::new(&TestParams::default(), 4096);
    p.pump();
    p.server.accept_params(p.now).unwrap();
    p.server.start_test(p.now, None).unwrap();
    p.server.terminate();
    p.pump();
    assert_eq!(p.client_events.last(), Some(&ClientEvent::ServerTerminate));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// However TCP splits the bytes, both sides see the same events.
    #[test]
    fn chunking_does_not_change_the_conversation(chunk in 1usize..64, parallel in 1u32..8, reverse in any::<bool>()) {
        let params = TestParams { parallel, reverse, title: Some("t".into()), ..Default::default() };
        let p = full_test(&params, chunk);
        prop_assert_eq!(p.client_events.len(), 6);
        prop_assert_eq!(p.server_events.len(), 5);
    }

    /// Random bytes never panic the server session, whatever phase they hit.
    #[test]
    fn random_bytes_never_panic_the_server(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let mut s = ServerSession::new(Duration::ZERO, ServerLimits::default());
        let _ = s.handle_input(Duration::ZERO, &bytes);
        let _ = s.handle_eof();
    }

    /// Random bytes never panic the client session.
    #[test]
    fn random_bytes_never_panic_the_client(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let mut c = ClientSession::new(Cookie::random(), &TestParams::default());
        let _ = c.handle_input(&bytes);
        let _ = c.handle_eof();
    }
}

#[test]
fn latency_offer_reaches_a_client_that_asked_before_create_streams() {
    let params = TestParams { wireperf_latency: true, ..Default::default() };
    for chunk in [1, 4096] {
        let mut p = Pair::new(&params, chunk);
        p.pump();
        let ServerEvent::Params(got) = &p.server_events[1] else { panic!("no params") };
        assert!(got.wireperf_latency);
        let offer = serde_json::json!({"udp_port": 40000, "tcp_port": 40001, "token": "00ff00ff00ff00ff"});
        p.server.offer_latency(&offer).unwrap();
        p.server.accept_params(p.now).unwrap();
        p.pump();
        assert_eq!(p.client_events, vec![ClientEvent::LatencyOffer(offer.clone()), ClientEvent::CreateStreams]);
    }
}

#[test]
fn latency_offer_to_a_client_that_did_not_ask_is_an_unknown_state() {
    let mut p = Pair::new(&TestParams::default(), 4096);
    p.pump();
    p.server.offer_latency(&serde_json::json!({"udp_port": 1})).unwrap();
    let out = p.server.take_output();
    let err = p.client.handle_input(&out).unwrap_err();
    assert!(matches!(err, ClientError::UnexpectedState { state: 80, .. }), "{err:?}");
}

#[test]
fn latency_offer_is_refused_outside_validation() {
    let mut p = Pair::new(&TestParams { wireperf_latency: true, ..Default::default() }, 4096);
    p.pump();
    p.server.accept_params(p.now).unwrap();
    assert!(p.server.offer_latency(&serde_json::json!({})).is_err());
}
