<?php

declare(strict_types=1);

namespace Kiln\Loop;

final class TimeoutException extends CancelledException {}
