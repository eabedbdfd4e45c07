<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\Static;

/** The cases in RangeRequestCases, against StaticFiles alone. */
final class RangeRequestsTest extends RangeRequestCases {}
