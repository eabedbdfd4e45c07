<?php

declare(strict_types=1);

namespace Kiln\Loop;

/** Too many of the Futures given to any() or some() failed; holds every error, by the Future's key. */
final class CompositeException extends LoopException
{
    /** @param array<array-key, \Throwable> $errors */
    public function __construct(private readonly array $errors, string $message = '')
    {
        $lines = [];
        foreach ($errors as $key => $error) {
            $lines[] = "[$key] " . $error::class . ': ' . $error->getMessage();
        }
        $first = $errors === [] ? null : $errors[\array_key_first($errors)];
        parent::__construct(($message !== '' ? $message : \count($errors) . ' operation(s) failed') . ":\n" . \implode("\n", $lines), 0, $first);
    }

    /** @return array<array-key, \Throwable> */
    public function getErrors(): array
    {
        return $this->errors;
    }
}
