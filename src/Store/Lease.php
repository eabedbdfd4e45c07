<?php

declare(strict_types=1);

namespace Kiln\Store;

/**
 * A named lease in the node's shared state: at most one holder at a time, for $ttlSeconds after its last
 * acquire() unless it renews. What the node-wide timers use to pick the one worker that runs them
 * (docs/design/023-timers-and-task-workers.md): a holder that dies stops renewing, and once the lease
 * expires another process takes it; a holder that stops in order release()s it, and the next acquire()
 * anywhere wins at once.
 *
 * Contract: acquire() and release() are atomic through SharedState::update(); a lease is held by one
 * $holder string (a pid, say) and only that holder renews or releases it. Expiry has the store's
 * clock (microtime): a lease lives $ttlSeconds after the last acquire() by its holder.
 */
final class Lease
{
    public function __construct(
        private readonly SharedState $state,
        private readonly string $name,
        private readonly string $holder,
        private readonly int $ttlSeconds,
    ) {
        if ($ttlSeconds < 1) {
            throw new \ValueError("A lease lasts at least one second, got $ttlSeconds");
        }
        if ($holder === '') {
            throw new \ValueError('A lease holder needs a name (a pid, say)');
        }
    }

    /** Takes the lease when it is free or expired, renews it when this holder has it; true when held now. */
    public function acquire(): bool
    {
        $holder = $this->holder;
        $now = microtime(true);
        $until = $now + $this->ttlSeconds;
        // The expiry is in the value: a refused update writes the current value back, and with it the
        // store's own TTL, which therefore only reclaims leases nobody asks for any more.
        $after = $this->state->update(
            $this->key(),
            static fn(?array $current): array => $current === null || ($current['holder'] ?? null) === $holder
                || self::until($current) <= $now ? ['holder' => $holder, 'until' => $until] : $current,
            $this->ttlSeconds + 1,
        );
        return ($after['holder'] ?? null) === $holder;
    }

    /** Gives the lease up when this holder has it (another holder's lease is left alone). */
    public function release(): void
    {
        $holder = $this->holder;
        $this->state->update(
            $this->key(),
            static fn(?array $current): ?array => ($current['holder'] ?? null) === $holder ? null : $current,
            $this->ttlSeconds + 1,
        );
    }

    /** Who holds it now (null: nobody, or it expired). */
    public function holder(): ?string
    {
        $current = $this->state->get($this->key());
        $holder = $current['holder'] ?? null;
        return \is_string($holder) && $current !== null && self::until($current) > microtime(true) ? $holder : null;
    }

    /** @param array<mixed> $lease */
    private static function until(array $lease): float
    {
        $until = $lease['until'] ?? 0;
        return \is_float($until) || \is_int($until) ? (float) $until : 0.0;
    }

    private function key(): string
    {
        return 'kiln.lease.' . $this->name;
    }
}
