<?php

declare(strict_types=1);

namespace Kiln\Site\Isolated\Internal;

use Kiln\Http\Request;
use Kiln\Site\Script;

/**
 * `php-cgi [request id] /script.php`, the prefix of a request's log lines, made the first time one is
 * written (most requests log nothing): the same id on every line of the request, and a random one only
 * when the request has none.
 *
 * @internal
 */
final class LogTag implements \Stringable
{
    private ?string $text = null;

    public function __construct(
        private readonly Request $request,
        private readonly Script $script,
    ) {}

    public function __toString(): string
    {
        if ($this->text === null) {
            $id = $this->request->attribute('request_id');
            $id = \is_string($id) && $id !== '' ? $id : bin2hex(random_bytes(6));
            $this->text = "php-cgi [$id] {$this->script->scriptName}";
        }
        return $this->text;
    }
}
