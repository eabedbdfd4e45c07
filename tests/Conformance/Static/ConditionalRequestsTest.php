<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\Static;

/** The cases in ConditionalRequestCases, against StaticFiles alone. */
final class ConditionalRequestsTest extends ConditionalRequestCases {}
