#if Logging
import Logging
#endif
#if Tracing
import Tracing
#endif
#if Metrics
import Metrics
#endif

/// What a client observes its calls with, each part present only with its package trait:
/// ``HttpClient/logger``, ``HttpClient/tracer`` and ``HttpClient/metricsFactory``.
struct ClientObservability: Sendable {
    #if Logging
    var logger = HttpClient.silentLogger
    #endif
    #if Tracing
    var tracer: (any Tracer)?
    #endif
    #if Metrics
    var metrics = ClientMetrics(factory: MetricsSystem.factory)
    #endif
}
