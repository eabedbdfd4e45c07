<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi\Internal;

use Kiln\Loop\Driver;
use Kiln\Loop\Loop;

/**
 * The time limits of a client's connections waiting for their responders, on one loop timer: armed for
 * the earliest limit, left running when a wait ends in time (nearly always), and on expiry it times out
 * what is due and re-arms for the next. A timer per wait would be made and cancelled on every request.
 * The timer keeps the loop running only while a wait is registered.
 *
 * @internal
 */
final class Timeouts
{
    /** @var array<int, float> Loop::now() by which each registered wait must end */
    private array $until = [];
    /** @var array<int, Connection> */
    private array $connections = [];
    private int $nextId = 0;
    private ?string $timer = null;
    private float $armedFor = \INF;
    private bool $referenced = false;
    private ?Driver $driver = null;

    /** Registers $connection's wait, to be timed out (Connection::timeOut()) $seconds from now. */
    public function add(Connection $connection, float $seconds): int
    {
        $driver = Loop::get();
        if ($driver !== $this->driver) { // the loop was replaced (tests): its timer ids mean nothing now
            $this->driver = $driver;
            $this->timer = null;
            $this->armedFor = \INF;
        }
        $id = $this->nextId++;
        $until = $driver->now() + \max(0.0, $seconds);
        $this->until[$id] = $until;
        $this->connections[$id] = $connection;
        if ($until < $this->armedFor) {
            $this->arm($driver, $until);
        } elseif (!$this->referenced && $this->timer !== null) {
            $driver->reference($this->timer);
            $this->referenced = true;
        }

        return $id;
    }

    public function remove(int $id): void
    {
        unset($this->until[$id], $this->connections[$id]);
        if ($this->until === [] && $this->referenced && $this->timer !== null) {
            $this->driver?->unreference($this->timer);
            $this->referenced = false;
        }
    }

    /** Cancels the timer (the client is gone). */
    public function close(): void
    {
        if ($this->timer !== null && $this->driver === Loop::get()) {
            $this->driver->cancel($this->timer);
        }
        $this->timer = null;
        $this->armedFor = \INF;
    }

    private function arm(Driver $driver, float $until): void
    {
        if ($this->timer !== null) {
            $driver->cancel($this->timer);
        }
        $this->armedFor = $until;
        $this->referenced = true;
        $this->timer = $driver->delay(\max(0.0, $until - $driver->now()), function (): void {
            $this->expire();
        });
    }

    private function expire(): void
    {
        $driver = $this->driver;
        $this->timer = null;
        $this->armedFor = \INF;
        $this->referenced = false;
        if ($driver === null) {
            return;
        }
        $now = $driver->now();
        $due = [];
        foreach ($this->until as $id => $until) {
            if ($until <= $now) {
                $due[] = $this->connections[$id];
                unset($this->until[$id], $this->connections[$id]);
            }
        }
        if ($this->until !== []) {
            $this->arm($driver, \min($this->until));
        }
        foreach ($due as $connection) {
            $connection->timeOut(); // its Fiber runs now, and may wait again (add())
        }
    }
}
