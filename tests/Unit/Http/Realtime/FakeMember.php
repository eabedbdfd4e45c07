<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Realtime;

use Kiln\Http\Realtime\Member;

/** A member that records what it was given; it may be told to throw. */
final class FakeMember implements Member
{
    /** @var list<string> */
    public array $received = [];

    public function __construct(private readonly string $id, private readonly bool $throws = false) {}

    public function memberId(): string
    {
        return $this->id;
    }

    public function deliver(string $payload): void
    {
        if ($this->throws) {
            throw new \RuntimeException("member {$this->id} failed");
        }
        $this->received[] = $payload;
    }
}
