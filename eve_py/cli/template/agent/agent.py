"""The agent: which model it runs on and how many steps a turn may take.

The system prompt is `instructions.md` (used because `define_agent` gets no `instructions=`).
`--model mock` runs the app offline on `mock_model.py`; without it the app uses `EVE_MODEL`,
else the model below (through the Vercel AI Gateway: set `AI_GATEWAY_API_KEY`).
"""

from eve_py import define_agent

agent = define_agent(model="anthropic/claude-sonnet-4.6", max_steps=10)
