<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

use Kiln\Http\AccessLog;
use Kiln\Http\Request;
use Kiln\Http\Wire\RequestHead;
use Kiln\Server\WorkerContext;

/**
 * What a worker's HTTP core records of each request: when it was dispatched, then, as it is answered, its access
 * log line, its metrics (RequestMetrics, with --admin-listen), the slow-request warning (--slow-request), and an
 * uncaught failure of its handler; also the requests and connections refused at a limit.
 *
 * @internal
 */
final class RequestRecord
{
    /** Durations are taken: metrics are on, or the access log wants them, or slow requests are logged. */
    public readonly bool $timed;

    /** Anything is recorded of a request answered (timed, or an access log without durations). */
    public readonly bool $active;

    /** null: --admin-listen is off, nothing is measured */
    private readonly ?RequestMetrics $metrics;

    /** @var array<int, int> when the running request of each connection was dispatched (hrtime, ns); kept only if $timed */
    private array $startedAt = [];

    /** @param \Closure(): array{int, int} $sample requests in flight and open HTTP connections, for the metrics */
    public function __construct(
        private readonly WorkerContext $context,
        private readonly ?AccessLog $accessLog,
        /** seconds past which a request is logged as slow; 0: off */
        private readonly float $slowRequest,
        \Closure $sample,
    ) {
        $registry = $context->metrics();
        $this->metrics = $registry === null ? null : new RequestMetrics($registry, $sample);
        $this->timed = $registry !== null || $accessLog?->timed() === true || $slowRequest > 0;
        $this->active = $this->timed || $accessLog !== null;
    }

    /** The handler of the connection's request is called now (only when $timed). */
    public function dispatched(int $connectionId): void
    {
        $this->startedAt[$connectionId] = (int) \hrtime(true);
    }

    public function answered(Connection $connection, Request $request, int $status, int $sent): void
    {
        $duration = 0;
        if ($this->timed) {
            $now = (int) \hrtime(true);
            $duration = $now - ($this->startedAt[$connection->id] ?? $now);
            unset($this->startedAt[$connection->id]);
            $this->metrics?->served($request, $status, $duration);
            $refused = $request->attribute(Request::REFUSED);
            if (\is_string($refused)) {
                $this->metrics?->rejected($status, $refused);
            }
            if ($this->slowRequest > 0 && $duration > $this->slowRequest * 1e9) {
                $head = $request->head();
                $this->context->log('warning', sprintf(
                    'slow request: %s %s answered %d in %.3f s (over --slow-request=%s)',
                    $head->method,
                    $head->target,
                    $status,
                    $duration / 1e9,
                    $this->slowRequest,
                ));
            }
        }
        if ($this->accessLog === null) {
            return;
        }
        $head = $request->head();
        $id = $request->attribute('request_id') ?? $request->header('x-request-id') ?? '';
        $tier = $request->attribute(RequestMetrics::TIER, 'app');
        $this->accessLog->record(
            $connection->remoteAddress,
            self::requestLine($head),
            $status,
            $sent,
            $request->header('referer') ?? '',
            $request->header('user-agent') ?? '',
            $duration / 1e9,
            \is_string($id) ? $id : '',
            \is_string($tier) ? $tier : 'app',
            $this->context->workerId(),
        );
    }

    public function failed(Request $request, \Throwable $failure): void
    {
        $message = 'Uncaught ' . $failure::class . ' while handling ' . $request->method() . ' ' . $request->target()
            . ': ' . $failure->getMessage() . ' at ' . $failure->getFile() . ':' . $failure->getLine();
        for ($previous = $failure->getPrevious(); $previous !== null; $previous = $previous->getPrevious()) {
            $message .= '; caused by ' . $previous::class . ': ' . $previous->getMessage();
        }
        $this->context->log('error', $message);
    }

    /**
     * A request the parser refused (HttpCore::reject()): its access log line and its count. With the head, when it
     * was read whole (a body over the limit or too slow), the line names the request as an answered one's does.
     */
    public function rejected(Connection $connection, ?RequestHead $head, int $status, int $sent): void
    {
        $this->accessLog?->record(
            $connection->remoteAddress,
            $head === null ? '-' : self::requestLine($head),
            $status,
            $sent,
            $head?->header('referer') ?? '',
            $head?->header('user-agent') ?? '',
            worker: $this->context->workerId(),
        );
        $this->metrics?->rejected($status, self::reason($status));
    }

    /** A request or connection refused at a limit before any handler ran: counted. */
    public function refused(int $status, string $reason): void
    {
        $this->metrics?->rejected($status, $reason);
    }

    public function flush(): void
    {
        $this->accessLog?->flush();
    }

    private static function requestLine(RequestHead $head): string
    {
        return $head->method . ' ' . $head->target . ' HTTP/' . $head->version;
    }

    private static function reason(int $status): string
    {
        return match ($status) {
            408 => 'timeout',
            413 => 'body_too_large',
            414 => 'uri_too_long',
            431 => 'headers_too_large',
            default => 'bad_request',
        };
    }
}
