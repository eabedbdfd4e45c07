<?php

declare(strict_types=1);

namespace Kiln\Http\Realtime\Internal;

use Kiln\Http\Realtime\Member;

/**
 * The members of one room in this worker, and the bus subscription held while there are any.
 *
 * @internal
 */
final class Room
{
    /** @var array<string, Member> by member id */
    public array $members = [];

    public function __construct(public readonly int $subscription) {}
}
