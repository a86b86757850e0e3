//! [`TraceLink`]: joins the server's spans to the trace a signal carries, for a tracing
//! backend with span ids of its own (OpenTelemetry through `tracing-opentelemetry`).

use crate::signal::TraceContext;

/// Joins the agent server's `signal` spans to the W3C trace context (`traceparent`,
/// `tracestate`) the signals carry, so that one trace spans services in a backend.
///
/// The library depends on `tracing` alone, which has no trace or span ids; without a link the
/// server passes the context it received on to the signals it emits, unchanged. With one
/// (`Options::trace_link`), the span of a step whose signal came from outside (or from a timer)
/// is handed to [`continue_trace`](TraceLink::continue_trace) before it is entered, and what
/// [`outgoing`](TraceLink::outgoing) returns is the context of the signals emitted in that step
/// (and of the work it starts), so the next service's spans hang under this one's.
///
/// With `tracing-opentelemetry` (the application's dependency, not the library's):
///
/// ```text
/// struct Otel;
/// impl TraceLink for Otel {
///     fn continue_trace(&self, span: &tracing::Span, context: &TraceContext) {
///         let carrier = HashMap::from([("traceparent".to_string(), context.traceparent().to_string())]);
///         let _ = span.set_parent(TraceContextPropagator::new().extract(&carrier));
///     }
///     fn outgoing(&self, span: &tracing::Span, incoming: Option<&TraceContext>) -> Option<TraceContext> {
///         let mut carrier = HashMap::new();
///         TraceContextPropagator::new().inject_context(&span.context(), &mut carrier);
///         TraceContext::parse(carrier.get("traceparent")?, incoming.and_then(TraceContext::tracestate))
///     }
/// }
/// ```
pub trait TraceLink: Send + Sync + 'static {
    /// Makes `span`, not yet entered, a child of the remote span `context` names.
    fn continue_trace(&self, span: &tracing::Span, context: &TraceContext);

    /// The context the signals emitted under `span` carry: by default the incoming one, as is.
    fn outgoing(
        &self,
        span: &tracing::Span,
        incoming: Option<&TraceContext>,
    ) -> Option<TraceContext> {
        let _ = span;
        incoming.cloned()
    }
}
