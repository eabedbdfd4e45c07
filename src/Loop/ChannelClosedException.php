<?php

declare(strict_types=1);

namespace Kiln\Loop;

final class ChannelClosedException extends LoopException {}
