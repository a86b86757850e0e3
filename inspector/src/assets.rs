//! The page, embedded in the binary: no CDN, works offline.

use axum::http::header;
use axum::response::IntoResponse;

const PAGE: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/inspector.js");
const STYLE: &str = include_str!("assets/inspector.css");

/// The page itself never changes while the server runs, but a new build may change it.
const NO_CACHE: (header::HeaderName, &str) = (header::CACHE_CONTROL, "no-cache");

pub(crate) fn page() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8"), NO_CACHE],
        PAGE,
    )
}

pub(crate) fn script() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            NO_CACHE,
        ],
        SCRIPT,
    )
}

pub(crate) fn style() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8"), NO_CACHE],
        STYLE,
    )
}
