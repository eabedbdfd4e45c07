<?php

declare(strict_types=1);

namespace Kiln\Server;

/** One worker's set of sidecars from one SidecarSpec (or the server's, when the spec is shared), as the supervisor keeps it (see Sidecars). */
final class SidecarSet
{
    /** @var array<int, SidecarProcess> member index => its current process */
    public array $members = [];

    /** @var array<int, int> member index => consecutive early deaths */
    public array $failures = [];

    /** @var array<int, float> member index => when to start it (backing off) */
    public array $spawnAt = [];

    /** @var array<int, true> the workers told about a shared set's members (pid => true); its owner is 0 */
    public array $subscribers = [];

    /** The executable, resolved once (null: not found). */
    public ?string $program = null;

    public function __construct(
        public readonly int $id,
        public readonly int $owner,
        public readonly SidecarSpec $spec,
    ) {}
}
