<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\Static;

/** The cases in CompressionCases, against StaticFiles alone. */
final class CompressionTest extends CompressionCases {}
