<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

use Kiln\Http\Request;
use Kiln\Server\Metrics\Counter;
use Kiln\Server\Metrics\Histogram;
use Kiln\Server\Metrics\Registry;

/**
 * The HTTP series of one worker (docs/design/024-metrics.md): requests by status class, method and tier, their
 * durations by tier, and refusals by status and reason. Only made when --admin-listen is on; a request then costs
 * two array updates and one hrtime() call.
 *
 * @internal
 */
final class RequestMetrics
{
    /** The request attribute a layer above sets to name the tier that answered (a string); unset: "app". */
    public const TIER = Request::TIER;

    private const METHODS = ['GET' => 1, 'HEAD' => 1, 'POST' => 1, 'PUT' => 1, 'PATCH' => 1, 'DELETE' => 1, 'OPTIONS' => 1];

    private readonly Counter $requests;

    private readonly Histogram $durations;

    private readonly Counter $rejections;

    /** @param \Closure(): array{int, int} $sample requests in flight and open HTTP connections, read at export */
    public function __construct(Registry $registry, \Closure $sample)
    {
        $this->requests = $registry->counter('kiln_http_requests_total', 'HTTP requests answered, by status class, method and tier', ['code', 'method', 'tier']);
        $this->durations = $registry->histogram('kiln_http_request_duration_seconds', 'Time from dispatch to the end of the response, by tier', ['tier']);
        $this->rejections = $registry->counter('kiln_http_rejections_total', 'Requests and connections refused at a limit, by status and reason', ['code', 'reason']);
        $inFlight = $registry->gauge('kiln_http_requests_in_flight', 'Requests whose handler is running');
        $connections = $registry->gauge('kiln_connections', 'Open client connections, by kind', ['kind']);
        $registry->sampler(static function () use ($sample, $inFlight, $connections): void {
            [$running, $open] = $sample();
            $inFlight->set($running);
            $connections->set($open, 'http');
        });
    }

    public function served(Request $request, int $status, int $durationNs): void
    {
        $tier = $request->attribute(self::TIER, 'app');
        $tier = \is_string($tier) ? $tier : 'app';
        $method = $request->method();
        $this->requests->inc(1.0, intdiv($status, 100) . 'xx', isset(self::METHODS[$method]) ? $method : 'other', $tier);
        $this->durations->observe($durationNs / 1e9, $tier);
    }

    public function rejected(int $status, string $reason): void
    {
        $this->rejections->inc(1.0, (string) $status, $reason);
    }
}
