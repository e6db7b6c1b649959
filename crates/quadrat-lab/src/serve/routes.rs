//! The HTTP side: the embedded page, the WebSocket upgrade, and the checks
//! in front of them.
//!
//! - `GET /`, `/app.js`, `/style.css`: the page, embedded in the binary;
//! - `GET /ws`: the WebSocket of one session.
//!
//! A server bound to loopback answers only requests addressed to a
//! loopback name (`localhost`, `127.0.0.1`, `[::1]`), so a web page
//! elsewhere cannot reach it through DNS rebinding. A WebSocket request that
//! carries an `Origin` must come from the page's own origin, so another site
//! open in the browser cannot start sessions.
//!
//! A refused WebSocket is still upgraded, then closed at once with a code
//! and a reason the page can read (a browser does not show a page the HTTP
//! status of a refused handshake): [`protocol::REFUSED_ORIGIN`] for another
//! origin, [`protocol::TOO_MANY_TABS`] when every session slot is taken. No
//! session starts for it.

use std::sync::Arc;

use axum::Router;
use std::time::Duration;

use axum::extract::ws::{Message, WebSocketUpgrade};
use axum::extract::{Request, State as Shared};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::StreamExt;
use tokio::time::timeout;

use super::{Full, State, close_frame, protocol, session};

/// Largest message the page may send (its JSON messages are far smaller).
pub(super) const MAX_MESSAGE: usize = 4096;

const INDEX_HTML: &str = include_str!("../../web/index.html");
const APP_JS: &str = include_str!("../../web/app.js");
const STYLE_CSS: &str = include_str!("../../web/style.css");

/// What the page may load and connect to: only itself.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// The lab's routes.
pub(super) fn router(state: Arc<State>) -> Router {
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }),
        )
        .route(
            "/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE_CSS) }),
        )
        .route("/ws", get(websocket))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found\n") })
        .layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            check_host,
        ))
        .with_state(state)
}

/// An embedded file with the headers every page response carries.
fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        ],
        body,
    )
        .into_response()
}

/// Upgrades to a session's WebSocket, if the origin is the page's own and
/// a session slot is free.
async fn websocket(
    Shared(state): Shared<Arc<State>>,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    if !same_origin(&headers) {
        let origin = headers
            .get(header::ORIGIN)
            .and_then(|o| o.to_str().ok())
            .unwrap_or("?");
        let reason: String = format!("refused origin: {origin} is not this lab's page")
            .chars()
            .take(100)
            .collect();
        return refuse(upgrade, protocol::REFUSED_ORIGIN, reason);
    }
    let (slot, bodies) = match state.admit() {
        Ok(admitted) => admitted,
        Err(Full::Sessions) => {
            let max = state.options.max_sessions;
            return refuse(
                upgrade,
                protocol::TOO_MANY_TABS,
                format!(
                    "too many tabs: {max} of {max} session{} in use",
                    if max == 1 { "" } else { "s" }
                ),
            );
        }
        Err(Full::Bodies(full)) => {
            return refuse(upgrade, protocol::SERVER_FULL, full.reason());
        }
    };
    upgrade
        .max_message_size(MAX_MESSAGE)
        .max_frame_size(MAX_MESSAGE)
        .on_upgrade(move |socket| async move {
            session::run(socket, state, bodies).await;
            drop(slot);
        })
}

/// Completes the handshake only to close the WebSocket at once with `code`
/// and `reason`, so that the page can say why; waits a little for the
/// page's answer, then drops the connection.
fn refuse(upgrade: WebSocketUpgrade, code: u16, reason: String) -> Response {
    const WAIT: Duration = Duration::from_secs(1);
    upgrade
        .max_message_size(MAX_MESSAGE)
        .max_frame_size(MAX_MESSAGE)
        .on_upgrade(move |mut socket| async move {
            let close = Message::Close(Some(close_frame(code, reason)));
            if let Ok(Ok(())) = timeout(WAIT, socket.send(close)).await {
                let answer = async { while let Some(Ok(_)) = socket.next().await {} };
                let _ = timeout(WAIT, answer).await;
            }
        })
}

/// Refuses requests to a loopback server that name another host.
async fn check_host(Shared(state): Shared<Arc<State>>, request: Request, next: Next) -> Response {
    if state.local.ip().is_loopback() {
        let host = request.headers().get(header::HOST).and_then(host_name);
        if !host.is_some_and(is_loopback_name) {
            return (
                StatusCode::MISDIRECTED_REQUEST,
                "this server answers only to localhost\n",
            )
                .into_response();
        }
    }
    next.run(request).await
}

/// The host name of a `Host` header value, without the port.
fn host_name(value: &HeaderValue) -> Option<&str> {
    let host = value.to_str().ok()?;
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split_once(']').map(|(ip, _)| ip);
    }
    Some(host.split_once(':').map_or(host, |(name, _)| name))
}

fn is_loopback_name(name: &str) -> bool {
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `true` without an `Origin` header (not a browser), or when the origin's
/// host and port are the request's `Host`.
fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let authority = origin
        .to_str()
        .ok()
        .and_then(|o| o.split_once("://"))
        .map(|(_, authority)| authority);
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    matches!((authority, host), (Some(a), Some(h)) if a.eq_ignore_ascii_case(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(header::HeaderName, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| (k.clone(), HeaderValue::from_static(v)))
            .collect()
    }

    #[test]
    fn host_names_drop_the_port() {
        let name = |v| host_name(&HeaderValue::from_static(v)).map(str::to_owned);
        assert_eq!(name("localhost:8080").as_deref(), Some("localhost"));
        assert_eq!(name("127.0.0.1").as_deref(), Some("127.0.0.1"));
        assert_eq!(name("[::1]:8080").as_deref(), Some("::1"));
        assert!(is_loopback_name("LOCALHOST"));
        assert!(is_loopback_name("127.0.0.2"));
        assert!(is_loopback_name("::1"));
        assert!(!is_loopback_name("evil.example"));
        assert!(!is_loopback_name("192.168.1.2"));
    }

    #[test]
    fn origins_must_match_the_host() {
        assert!(same_origin(&headers(&[(header::HOST, "127.0.0.1:8080")])));
        assert!(same_origin(&headers(&[
            (header::HOST, "127.0.0.1:8080"),
            (header::ORIGIN, "http://127.0.0.1:8080"),
        ])));
        assert!(!same_origin(&headers(&[
            (header::HOST, "127.0.0.1:8080"),
            (header::ORIGIN, "http://evil.example"),
        ])));
        assert!(!same_origin(&headers(&[
            (header::HOST, "127.0.0.1:8080"),
            (header::ORIGIN, "null"),
        ])));
    }
}
