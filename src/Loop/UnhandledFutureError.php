<?php

declare(strict_types=1);

namespace Kiln\Loop;

/** An async() Future failed and was destroyed without anyone observing its error (getPrevious()). */
final class UnhandledFutureError extends \Error
{
    public function __construct(\Throwable $previous)
    {
        parent::__construct(
            'Unhandled error of an async() Future: ' . $previous::class . ': ' . $previous->getMessage()
            . '; await the Future, pass it to a combinator, or call ignore() on it',
            0,
            $previous,
        );
    }
}
