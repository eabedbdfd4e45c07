<?php

declare(strict_types=1);

namespace Kiln\Loop;

/** Reading or writing a stream failed (peer reset, broken pipe, stream closed under us). */
final class StreamException extends LoopException {}
