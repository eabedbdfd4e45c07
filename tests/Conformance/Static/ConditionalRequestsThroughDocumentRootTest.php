<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\Static;

/** The cases in ConditionalRequestCases, through `kiln serve DIR` (the document root in front of the same files). */
final class ConditionalRequestsThroughDocumentRootTest extends ConditionalRequestCases
{
    protected static function throughDocumentRoot(): bool
    {
        return true;
    }
}
