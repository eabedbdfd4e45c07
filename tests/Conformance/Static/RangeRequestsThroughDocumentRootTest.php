<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\Static;

/** The cases in RangeRequestCases, through `kiln serve DIR` (the document root in front of the same files). */
final class RangeRequestsThroughDocumentRootTest extends RangeRequestCases
{
    protected static function throughDocumentRoot(): bool
    {
        return true;
    }
}
