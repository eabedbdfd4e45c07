<?php

declare(strict_types=1);

namespace Kiln\Loop;

use Kiln\Loop\Internal\Canceller;

/**
 * Requested as soon as any of its Cancellations is, with that one's exception. It listens to them
 * only while something is subscribed to it, so an idle composite keeps no timer referenced.
 */
final class CompositeCancellation implements Cancellation
{
    private readonly Canceller $canceller;
    /** @var list<Cancellation> */
    private readonly array $cancellations;
    /** @var array<int, string> subscription id in $cancellations[i] */
    private array $inner = [];

    public function __construct(Cancellation ...$cancellations)
    {
        $this->canceller = new Canceller();
        $this->cancellations = \array_values($cancellations);
    }

    public function __destruct()
    {
        $this->detach();
    }

    public function subscribe(\Closure $callback): string
    {
        $id = $this->canceller->subscribe($callback);
        if ($this->inner === []) {
            $canceller = $this->canceller;
            foreach ($this->cancellations as $i => $cancellation) {
                $this->inner[$i] = $cancellation->subscribe(static function (CancelledException $e) use ($canceller): void {
                    $canceller->cancel($e);
                });
            }
        }

        return $id;
    }

    public function unsubscribe(string $id): void
    {
        $this->canceller->unsubscribe($id);
        if ($this->canceller->subscriberCount() === 0) {
            $this->detach();
        }
    }

    public function isRequested(): bool
    {
        foreach ($this->cancellations as $cancellation) {
            if ($cancellation->isRequested()) {
                return true;
            }
        }

        return false;
    }

    public function throwIfRequested(): void
    {
        foreach ($this->cancellations as $cancellation) {
            $cancellation->throwIfRequested();
        }
    }

    private function detach(): void
    {
        foreach ($this->inner as $i => $id) {
            $this->cancellations[$i]->unsubscribe($id);
        }
        $this->inner = [];
    }
}
