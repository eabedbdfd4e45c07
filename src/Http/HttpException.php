<?php

declare(strict_types=1);

namespace Kiln\Http;

/** Base of every runtime failure in the Http layer (malformed input, peer gone, timeout). */
class HttpException extends \Exception {}
