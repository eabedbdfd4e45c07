<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\Static;

/** The cases in HeadersAndMethodsCases, against StaticFiles alone. */
final class HeadersAndMethodsTest extends HeadersAndMethodsCases {}
