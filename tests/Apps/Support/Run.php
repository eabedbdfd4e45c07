<?php

declare(strict_types=1);

namespace Kiln\Tests\Apps\Support;

/**
 * The steps of one user flow on one stack, each with what was expected and what came back. A flow goes on after a
 * failed step (later steps often show more); an exception (connection refused, timeout) ends it and is recorded.
 */
final class Run
{
    /** @var list<Step> */
    private array $steps = [];

    private ?string $error = null;

    private float $seconds = 0.0;

    /** @var array{requests: int, replaced: int}|null */
    private ?array $churn = null;

    /** @var (\Closure(): string)|null the server's whole log so far */
    private ?\Closure $serverLog = null;

    /** How much of the server's log the steps recorded so far have seen. */
    private int $logSeen = 0;

    /** Failed steps that still wait for the server's buffered lines before taking theirs (a bound on the delay). */
    private int $logWaits = 5;

    public function __construct(public readonly string $app, public readonly string $stack) {}

    /**
     * From now on a failed step keeps what the server logged since the step before it: the request's own error
     * lines (a 502's cause) end up in the failure message next to the step, not lost above a long log's tail.
     *
     * @param \Closure(): string $log the server's whole log so far
     */
    public function watchServerLog(\Closure $log): void
    {
        $this->serverLog = $log;
        $this->logSeen = \strlen($log());
    }

    /**
     * Records a step: the status must be one of $status, every $contains string must be in the body (or, for a
     * string starting with `Location:`, in the Location header), no $absent string may be.
     *
     * @param int|list<int> $status
     * @param list<string> $contains
     * @param list<string> $absent
     */
    public function expect(string $step, Page $page, int|array $status, array $contains = [], array $absent = []): Page
    {
        $problems = [];
        $statuses = \is_int($status) ? [$status] : $status;
        if (!\in_array($page->status, $statuses, true)) {
            $problems[] = 'status ' . $page->status . ', expected ' . implode(' or ', $statuses);
        }
        foreach ($contains as $needle) {
            if (str_starts_with($needle, 'Location:')) {
                if (!str_contains($page->header('location'), trim(substr($needle, 9)))) {
                    $problems[] = "no $needle";
                }
            } elseif (!str_contains($page->body, $needle)) {
                $problems[] = "body lacks \"$needle\"";
            }
        }
        foreach ($absent as $needle) {
            if (str_contains($page->body, $needle)) {
                $problems[] = "body has \"$needle\"";
            }
        }
        $this->add($step, $problems === [], $page->status, $problems === [] ? '' : implode('; ', $problems) . ' — ' . $page->summary(), Step::COMPARE_STATUS);
        return $page;
    }

    /**
     * Records an access-control step: the file must be refused (403 or 404) without leaking any of $secrets. On
     * Apache, a file its Debian configuration does not protect ($apacheRefuses false) is recorded for information.
     *
     * @param list<string> $secrets
     */
    public function refused(string $step, Page $page, array $secrets, bool $apacheRefuses): void
    {
        $leaked = array_values(array_filter($secrets, static fn(string $s): bool => str_contains($page->body, $s)));
        $ok = \in_array($page->status, [403, 404], true) && $leaked === [];
        if ($this->stack === Stack::APACHE && !$apacheRefuses) {
            $this->add($step, true, $page->status, "not protected by Debian's Apache config: {$page->status}" . ($leaked !== [] ? ', leaks it' : ''), Step::COMPARE_NONE);
            return;
        }
        $detail = $ok ? '' : "not refused: {$page->status}" . ($leaked !== [] ? ' and the body has ' . implode(', ', $leaked) : '') . ' — ' . $page->summary(120);
        $this->add($step, $ok, $page->status, $detail, Step::COMPARE_REFUSED);
    }

    /** A check that is not about one response (e.g. a database row). */
    public function assert(string $step, bool $ok, string $detail): void
    {
        $this->add($step, $ok, 0, $ok ? '' : $detail, Step::COMPARE_NONE);
    }

    private function add(string $name, bool $ok, int $status, string $detail, string $compare): void
    {
        $log = '';
        if ($this->serverLog !== null) {
            if (!$ok && $this->logWaits-- > 0) {
                usleep(1_100_000); // Kiln's access log reaches the file on its once-a-second tick
            }
            $whole = ($this->serverLog)();
            $log = $ok ? '' : (string) substr($whole, $this->logSeen);
            $this->logSeen = \strlen($whole);
        }
        $this->steps[] = new Step($name, $ok, $status, $detail, $compare, $log);
    }

    public function fail(\Throwable $e): void
    {
        $this->error = $e::class . ': ' . $e->getMessage();
    }

    public function finish(float $seconds): void
    {
        $this->seconds = $seconds;
    }

    /** The stack's memory at the end of the flow (Stack::pssBytes()), null when not measured. */
    public ?int $pssBytes = null;

    /** @param array{requests: int, replaced: int}|null $churn */
    public function recordChurn(?array $churn): void
    {
        $this->churn = $churn;
    }

    /** @return array{requests: int, replaced: int}|null */
    public function churn(): ?array
    {
        return $this->churn;
    }

    public function seconds(): float
    {
        return $this->seconds;
    }

    /** @return list<Step> */
    public function steps(): array
    {
        return $this->steps;
    }

    public function step(string $name): ?Step
    {
        foreach ($this->steps as $step) {
            if ($step->name === $name) {
                return $step;
            }
        }
        return null;
    }

    public function passed(): bool
    {
        return $this->error === null && $this->firstFailure() === null;
    }

    public function firstFailure(): ?Step
    {
        foreach ($this->steps as $step) {
            if (!$step->ok) {
                return $step;
            }
        }
        return null;
    }

    /** One line: why the run failed, or '' when it passed. */
    public function reason(): string
    {
        $failure = $this->firstFailure();
        $failed = array_filter($this->steps, static fn(Step $s): bool => !$s->ok);
        $count = \count($failed) > 1 ? ' (+' . (\count($failed) - 1) . ' more failed steps)' : '';
        return match (true) {
            $failure !== null => "{$failure->name}: {$failure->detail}$count" . ($this->error !== null ? "; then {$this->error}" : ''),
            $this->error !== null => 'after ' . \count($this->steps) . " steps: {$this->error}",
            default => '',
        };
    }

    /**
     * Differences from the reference run (Apache): a step whose status or refusal differs, or that only one has.
     *
     * @return list<string>
     */
    public function differencesFrom(self $reference): array
    {
        $out = [];
        foreach ($reference->steps as $theirs) {
            $mine = $this->step($theirs->name);
            if ($mine === null) {
                $out[] = "{$theirs->name}: not reached on {$this->stack}";
            } elseif ($theirs->compare === Step::COMPARE_STATUS && $mine->status !== $theirs->status) {
                $out[] = "{$theirs->name}: {$this->stack} answered {$mine->status}, {$reference->stack} {$theirs->status}";
            } elseif ($theirs->compare === Step::COMPARE_REFUSED && $mine->ok !== $theirs->ok) {
                $out[] = "{$theirs->name}: refused on " . ($mine->ok ? $this->stack : $reference->stack) . ' only';
            }
        }
        return $out;
    }

    /** Every step, one per line, for a failure message. */
    public function transcript(): string
    {
        $lines = ["{$this->app} on {$this->stack}:"];
        foreach ($this->steps as $step) {
            $lines[] = sprintf('  %s %-40s %3d %s', $step->ok ? 'ok  ' : 'FAIL', $step->name, $step->status, $step->detail);
            if ($step->serverLog !== '') {
                $lines[] = self::logExcerpt($step->serverLog);
            }
        }
        if ($this->error !== null) {
            $lines[] = "  stopped: {$this->error}";
        }
        return implode("\n", $lines);
    }

    /** The server's lines of one step, indented under it; a long stretch keeps its last 40 lines. */
    private static function logExcerpt(string $log): string
    {
        $lines = explode("\n", rtrim($log, "\n"));
        $dropped = \count($lines) > 40 ? \count($lines) - 40 : 0;
        $shown = array_map(static fn(string $line): string => '         | ' . mb_strimwidth($line, 0, 400, '…'), \array_slice($lines, $dropped));

        return "         server log during this step" . ($dropped > 0 ? " (last 40 of " . \count($lines) . ' lines)' : '') . ":\n" . implode("\n", $shown);
    }
}
