<?php

declare(strict_types=1);

namespace Kiln\Tests\Apps\Support;

/** One step of a flow: did it meet its expectations, the status seen, why not, and how it compares with Apache. */
final class Step
{
    /** The status must equal the reference's. */
    public const COMPARE_STATUS = 'status';
    /** Both must refuse (403 or 404): the code may differ. */
    public const COMPARE_REFUSED = 'refused';
    /** Not compared. */
    public const COMPARE_NONE = 'none';

    public function __construct(
        public readonly string $name,
        public readonly bool $ok,
        public readonly int $status,
        public readonly string $detail,
        public readonly string $compare,
        /** For a failed step: what the server logged while it ran (why a 502 happened), else ''. */
        public readonly string $serverLog = '',
    ) {}
}
